//===- Partition.cpp - the training step as one SPMD program on a mesh ----===//
//
// 1. Build the mesh from the strategy (axes of size > 1, in the order
//    pp, dp, ep, cp, tp) and check it against the function's shapes.
//    Nothing is split over pp: llmc-split-pipeline later gives each pp
//    position its stage.
// 2. Give every argument its sharding: tokens by batch over dp and ep and
//    by sequence over cp (zigzag: an early and a late chunk each),
//    parameters by their llmc.tp_split over tp and their llmc.ep_split
//    (stacked experts) over ep, ZeRO's dp split on moments (stage >= 1) and
//    parameters (stage 3).
// 3. Walk the ops in program order; each op's sharding rule
//    (ShardingRuleOpInterface, sharding/ShardRules*.cpp) builds its local
//    form in the new function, resharding operands through
//    sharding/PartitionContext.h.
// 4. Return every result in its argument's sharding (new parameters and
//    moments, so that buffers are donated and the next step binds them as
//    they are) or replicated (loss, grad_norm, lr).
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "passes/Passes.h"

#include "ir/LlmcOps.h"
#include "ir/Matchers.h"
#include "ir/Phase.h"
#include "sharding/PartitionContext.h"
#include "sharding/Registration.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <tuple>

namespace llmc {
#define GEN_PASS_DEF_PARTITIONPASS
#include "passes/Passes.h.inc"
} // namespace llmc

using namespace mlir;

namespace llmc {
namespace {

/// The layer a location's model part is in, up to its first all-digit
/// component ("transformer.h.3.attn" -> "transformer.h.3"), or the whole
/// part outside the layers ("lm_head").
std::string layerOrPartOf(Location loc) {
  std::string part = modelPartOf(loc);
  size_t start = 0;
  while (start < part.size()) {
    size_t end = std::min(part.find('.', start), part.size());
    bool digits = end > start;
    for (size_t i = start; i < end; ++i)
      digits = digits && std::isdigit(static_cast<unsigned char>(part[i]));
    if (digits)
      return part.substr(0, end);
    start = end + 1;
  }
  return part;
}

/// Copies llmc.microbatch from the op being partitioned to every op its
/// rule builds.
struct CarryMicrobatch : public OpBuilder::Listener {
  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
    if (Attribute mb = from ? from->getAttr("llmc.microbatch") : Attribute())
      if (!op->hasAttr("llmc.microbatch"))
        op->setAttr("llmc.microbatch", mb);
  }
  Operation *from = nullptr;
};

struct PartitionPass : public impl::PartitionPassBase<PartitionPass> {
  using Base::Base;

  /// The ops' sharding rules are external models (sharding/Registration.h):
  /// a pipeline that partitions brings them.
  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    registerShardingRuleModels(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto step = module.lookupSymbol<func::FuncOp>(function);
    if (!step)
      return; // Nothing to partition (a forward-only compile).
    if (dp < 1 || tp < 1 || cp < 1 || ep < 1 || pp < 1 || zero < 0 ||
        zero > 3) {
      step.emitError() << "invalid strategy: pp = " << pp << ", dp = " << dp
                       << ", ep = " << ep << ", cp = " << cp << ", tp = " << tp
                       << ", zero = " << zero;
      return signalPassFailure();
    }
    // 1. The mesh.
    Mesh mesh;
    if (pp > 1) {
      mesh.names.push_back("pp");
      mesh.sizes.push_back(pp);
    }
    if (dp > 1) {
      mesh.names.push_back("dp");
      mesh.sizes.push_back(dp);
    }
    if (ep > 1) {
      mesh.names.push_back("ep");
      mesh.sizes.push_back(ep);
    }
    if (cp > 1) {
      mesh.names.push_back("cp");
      mesh.sizes.push_back(cp);
    }
    if (tp > 1) {
      mesh.names.push_back("tp");
      mesh.sizes.push_back(tp);
    }
    if (mesh.names.empty())
      return;
    PartitionPolicy policy;
    if (zero >= 1 && dp > 1)
      policy.zeroAxis = mesh.axisIndex("dp");
    policy.scatterEachGradient = zero >= 2 && dp > 1;
    if (sp && tp > 1)
      policy.sequenceAxis = mesh.axisIndex("tp");
    if (failed(partition(module, step, mesh, policy)))
      return signalPassFailure();
    mesh.addToModule(module);
  }

  /// The sharding argument `index` starts in (step 2).
  FailureOr<Sharding> argumentSharding(func::FuncOp step, unsigned index,
                                       const Mesh &mesh,
                                       const PartitionContext &context) {
    auto type = cast<RankedTensorType>(step.getArgument(index).getType());
    Sharding s = Sharding::replicated(type.getRank());
    auto role = step.getArgAttrOfType<StringAttr>(index, "llmc.role");
    StringRef kind = role ? role.getValue() : "input";
    int64_t dpAxis = mesh.axisIndex("dp"), tpAxis = mesh.axisIndex("tp");
    int64_t cpAxis = mesh.axisIndex("cp");
    int64_t epAxis = mesh.axisIndex("ep");
    if (kind == "input") {
      // Microbatch m is rows [m·B/M, (m+1)·B/M): each is split over dp (and
      // ep, which splits the tokens like dp), so the batch is M blocks of
      // dp·ep chunks.
      SmallVector<int64_t> batchAxes;
      for (int64_t axis : {dpAxis, epAxis})
        if (axis >= 0)
          batchAxes.push_back(axis);
      if (!batchAxes.empty() && type.getRank() >= 1)
        s.dims[0] = DimSplit{batchAxes, std::max<int64_t>(microbatches, 1)};
      // Context parallelism: the sequence [B, T] in 2·cp chunks, rank r
      // holding chunks r and 2·cp-1-r, so that causal attention costs every
      // rank the same (docs/sharding.md).
      if (cpAxis >= 0 && type.getRank() >= 2)
        s.dims[1] = DimSplit{{cpAxis}, 2, /*zigzag=*/true};
      return s;
    }
    // Stacked experts [E, ...]: expert e on ep rank e / (E / ep).
    if (epAxis >= 0)
      if (auto hint =
              step.getArgAttrOfType<IntegerAttr>(index, "llmc.ep_split");
          hint && hint.getInt() >= 0 && hint.getInt() < type.getRank())
        s.dims[hint.getInt()] = DimSplit{{epAxis}, 1};
    if (tpAxis >= 0)
      if (auto hint =
              step.getArgAttrOfType<DenseI64ArrayAttr>(index, "llmc.tp_split");
          hint && hint.size() == 2 && hint[0] >= 0 &&
          hint[0] < type.getRank())
        s.dims[hint[0]] = DimSplit{{tpAxis}, hint[1]};
    bool zeroSplit = kind == "optimizer_state" ? zero >= 1
                                                : kind == "parameter" && zero >= 3;
    if (zeroSplit && dpAxis >= 0 && type.getRank() >= 1) {
      int64_t d = context.zeroDim(type.getShape(), s);
      if (d >= 0)
        s.dims[d].axes.push_back(dpAxis);
    }
    return s;
  }

  LogicalResult partition(ModuleOp module, func::FuncOp step, const Mesh &mesh,
                          PartitionPolicy policy) {
    OpBuilder builder(module.getContext());
    PartitionContext context(mesh, policy, builder);
    MLIRContext *ctx = module.getContext();

    // 2. Arguments.
    SmallVector<Sharding> argShardings;
    SmallVector<Type> argTypes;
    llvm::StringMap<unsigned> argByName;
    for (unsigned i = 0; i < step.getNumArguments(); ++i) {
      FailureOr<Sharding> s = argumentSharding(step, i, mesh, context);
      if (failed(s))
        return failure();
      FailureOr<RankedTensorType> local =
          context.localType(step.getArgument(i).getType(), *s, step);
      if (failed(local)) {
        auto name = step.getArgAttrOfType<StringAttr>(i, "llmc.name");
        return step.emitError()
               << "argument '" << (name ? name.getValue() : "?") << "' of type "
               << step.getArgument(i).getType() << " cannot be split as "
               << s->text(mesh) << " over the mesh";
      }
      argShardings.push_back(*s);
      argTypes.push_back(*local);
      if (auto name = step.getArgAttrOfType<StringAttr>(i, "llmc.name"))
        argByName[name.getValue()] = i;
    }

    // The new function, built next to the old one.
    builder.setInsertionPoint(step);
    auto results = step.getFunctionType().getResults();
    SmallVector<Sharding> resultShardings;
    SmallVector<Type> resultTypes;
    for (unsigned i = 0; i < results.size(); ++i) {
      auto name = step.getResultAttrOfType<StringAttr>(i, "llmc.name");
      auto it = name ? argByName.find(name.getValue()) : argByName.end();
      Sharding s = it != argByName.end()
                       ? argShardings[it->second]
                       : Sharding::replicated(
                             cast<RankedTensorType>(results[i]).getRank());
      FailureOr<RankedTensorType> local =
          context.localType(results[i], s, step);
      if (failed(local))
        return failure();
      resultShardings.push_back(s);
      resultTypes.push_back(*local);
    }
    auto local = func::FuncOp::create(
        builder, step.getLoc(), step.getSymName(),
        FunctionType::get(ctx, argTypes, resultTypes));
    local->setAttrs(step->getAttrs());
    local.setFunctionType(FunctionType::get(ctx, argTypes, resultTypes));
    // Codegen builds one program per mesh rank for this function only (a
    // companion such as @logits stays a one-device program).
    local->setAttr("llmc.partitioned", UnitAttr::get(ctx));
    Block *entry = local.addEntryBlock();
    for (unsigned i = 0; i < step.getNumArguments(); ++i) {
      context.map(step.getArgument(i), entry->getArgument(i), argShardings[i]);
      local.setArgAttr(i, "llmc.sharding", argShardings[i].toAttr(ctx, mesh));
      if (Attribute groups = argShardings[i].groupsAttr(ctx))
        local.setArgAttr(i, "llmc.shard_groups", groups);
      if (Attribute zigzag = argShardings[i].zigzagAttr(ctx))
        local.setArgAttr(i, "llmc.shard_zigzag", zigzag);
    }
    for (unsigned i = 0; i < results.size(); ++i) {
      local.setResultAttr(i, "llmc.sharding",
                          resultShardings[i].toAttr(ctx, mesh));
      if (Attribute groups = resultShardings[i].groupsAttr(ctx))
        local.setResultAttr(i, "llmc.shard_groups", groups);
      if (Attribute zigzag = resultShardings[i].zigzagAttr(ctx))
        local.setResultAttr(i, "llmc.shard_zigzag", zigzag);
    }

    // 3. Ops. What a rule builds for an op of microbatch m belongs to
    // microbatch m too (the pipeline schedule orders by it).
    builder.setInsertionPointToStart(entry);
    CarryMicrobatch carry;
    builder.setListener(&carry);
    bool ok = true;
    for (Operation &op : step.getBody().front()) {
      carry.from = &op;
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        // 4. Results.
        SmallVector<Value> values;
        for (auto [value, s] : llvm::zip(ret.getOperands(), resultShardings)) {
          FailureOr<Value> v = context.reshard(value, s, &op);
          if (failed(v))
            return failure();
          values.push_back(*v);
        }
        func::ReturnOp::create(builder, ret.getLoc(), values);
        continue;
      }
      auto rule = dyn_cast<ShardingRuleOpInterface>(op);
      if (!rule) {
        op.emitOpError() << "has no sharding rule; the partitioner handles "
                            "llmc ops only";
        ok = false;
        break;
      }
      if (failed(rule.partition(context))) {
        ok = false;
        break;
      }
    }
    builder.setListener(nullptr);
    if (!ok) {
      local.erase();
      return failure();
    }
    step.erase();
    bucketAllReduces(local, mesh);
    if (zero >= 3 && mesh.axisIndex("pp") < 0)
      prefetchGathers(local);
    if (mesh.axisIndex("pp") < 0)
      scatterEarly(local);
    return success();
  }

  /// 7. Reduce-scatters issued early (without a pipeline, whose split
  /// orders the body itself): a reduce-scatter is made where a reader
  /// needs the sum (ZeRO-2/3's gradients at the optimizer, after the whole
  /// backward), but it can run as soon as its input exists. Each one whose
  /// input nothing else reads moves up to just after the op that makes that
  /// input, with the single-use transposes and reshapes between them
  /// (onLeadingAxis's views), and takes that op's location (a trace or a
  /// timeout names it there; its reason still names the reader). After a
  /// norm gradient whose next op adds the residual to its dx, it goes after
  /// that add: the CUDA runtime folds such an add into the norm's kernel
  /// only when it is the very next command (findFoldedAdds). Then the
  /// communication stream sums layer l's gradients while the compute stream
  /// runs layer l - 1's backward, and the full gradient dies there instead
  /// of living until the update: ZeRO-2's memory, as its buckets in
  /// DeepSpeed. The values are the same, only the time moves.
  void scatterEarly(func::FuncOp function) {
    Block &block = function.getBody().front();
    SmallVector<shard::ReduceScatterOp> scatters;
    for (Operation &op : block)
      if (auto scatter = dyn_cast<shard::ReduceScatterOp>(op))
        scatters.push_back(scatter);
    auto singleUseView = [&](Operation *op, Operation *user) {
      return op && op->getBlock() == &block && op->hasOneUse() &&
             *op->getUsers().begin() == user &&
             isa<llmc::TransposeOp, llmc::ReshapeOp>(op);
    };
    for (shard::ReduceScatterOp scatter : scatters) {
      if (!scatter.getInput().hasOneUse())
        continue;
      // The chain, the scatter first, then the views it reads.
      SmallVector<Operation *> chain = {scatter};
      while (true) {
        Operation *view = chain.back()->getOperand(0).getDefiningOp();
        if (!singleUseView(view, chain.back()))
          break;
        chain.push_back(view);
      }
      Value source = chain.back()->getOperand(0);
      Operation *producer = source.getDefiningOp();
      if (producer && producer->getBlock() != &block)
        producer = block.findAncestorOpInBlock(*producer);
      // Deepest first, each right after what it reads.
      Operation *after = producer;
      if (Operation *add = foldableResidualAdd(producer))
        after = add;
      for (Operation *op : llvm::reverse(chain)) {
        if (after && !after->isBeforeInBlock(op))
          break; // already there (or later: nothing to gain)
        if (after)
          op->moveAfter(after);
        else
          op->moveBefore(&block.front());
        if (producer)
          op->setLoc(producer->getLoc());
        after = op;
      }
    }
  }

  /// 6. ZeRO-3's prefetch (without a pipeline, whose split reorders the
  /// body): every all-gather of a function argument (a weight sharded over
  /// dp) moves up to the first op of the model part before its reader's,
  /// in program order (a part: the layer or the part outside the layers of
  /// an op's location, with its phase), so that the communication stream
  /// gathers layer l's weights while the compute stream runs layer l - 1
  /// forward, or l + 1 backward: one layer ahead, as FSDP's prefetch. The
  /// gathered copy lives one part longer (the buffer plan counts it); the
  /// values are the same, only the time moves.
  void prefetchGathers(func::FuncOp function) {
    Block &block = function.getBody().front();
    SmallVector<Operation *> ops;
    for (Operation &op : block)
      if (!isa<shard::AllGatherOp>(op))
        ops.push_back(&op);
    // For each op (not a gather) the first op of the part before its own.
    DenseMap<Operation *, Operation *> previousPart;
    Operation *partStart = nullptr, *lastStart = nullptr;
    std::string part;
    for (Operation *op : ops) {
      std::string mine = layerOrPartOf(op->getLoc()) + "/" +
                         std::to_string(static_cast<int>(phaseOf(op->getLoc())));
      if (!partStart || mine != part) {
        lastStart = partStart;
        partStart = op;
        part = mine;
      }
      if (lastStart)
        previousPart[op] = lastStart;
    }
    SmallVector<shard::AllGatherOp> gathers;
    for (Operation &op : block)
      if (auto gather = dyn_cast<shard::AllGatherOp>(op);
          gather && isa<BlockArgument>(gather.getInput()))
        gathers.push_back(gather);
    for (shard::AllGatherOp gather : gathers) {
      Operation *first = nullptr;
      for (Operation *user : gather.getResult().getUsers())
        if (Operation *inBlock = block.findAncestorOpInBlock(*user))
          if (!first || inBlock->isBeforeInBlock(first))
            first = inBlock;
      Operation *target = first ? previousPart.lookup(first) : nullptr;
      if (target && target->isBeforeInBlock(gather))
        gather->moveBefore(target);
    }
  }

  /// 5. Buckets: consecutive all-reduces of one kind (mesh axes, reduction,
  /// element type) whose inputs all exist before the first of them become
  /// one all-reduce of their concatenation, up to `bucket-bytes` each (the
  /// data-parallel gradients: 28 all-reduces of GPT-2 tiny become 1; fewer,
  /// larger messages, as DDP's buckets). The flat buffer costs a copy in
  /// and out; a bucket of one stays as it is.
  /// Under pipeline parallelism a bucket of the forward or the backward
  /// keeps to one layer (or one model part outside the layers):
  /// llmc-split-pipeline runs those ops in units of one chunk of layers and
  /// one microbatch, and puts a bucket where its first member's model part
  /// is, so a bucket of several layers could run on one stage after a unit
  /// of another stage that reads it (ZeRO-2 under cp: the cp sums of every
  /// layer's per-microbatch gradients made one bucket at the embedding's
  /// backward, on the first stage, which the last stage's reduce-scatters
  /// read before the first stage's backward runs). The update's buckets keep
  /// to one layer too: a bucket of several layers' gradients runs on the
  /// stage of its first member, every other stage's gradients sent to it and
  /// their sums back (GPT-2 tiny, dp2 x pp4: 60 gradient-sized transfers a
  /// step; llmc.stage is not known here, the layer is).
  void bucketAllReduces(func::FuncOp function, const Mesh &mesh) {
    if (bucketBytes <= 0)
      return;
    if (mesh.axisIndex("pp") < 0) {
      bucketEarly(function, mesh);
      return;
    }
    SmallVector<SmallVector<shard::AllReduceOp>> buckets;
    // One open bucket per kind; other collectives in between do not close it.
    using Key =
        std::tuple<std::vector<int16_t>, int, const void *, std::string>;
    std::map<Key, std::pair<SmallVector<shard::AllReduceOp>, int64_t>> open;
    bool pipelined = mesh.axisIndex("pp") >= 0;
    auto key = [&](shard::AllReduceOp op) {
      std::string unit;
      if (pipelined) {
        // The layer of the summed value: an update's all-reduce sits at its
        // first reader (the gradient norm's, "loss"), its input where the
        // gradient was made.
        Operation *producer = op.getInput().getDefiningOp();
        unit = layerOrPartOf(phaseOf(op.getLoc()) == Phase::Optimizer && producer
                                 ? producer->getLoc()
                                 : op.getLoc());
      }
      return Key(std::vector<int16_t>(op.getGridAxes().begin(),
                                      op.getGridAxes().end()),
                 static_cast<int>(op.getReduction()),
                 cast<RankedTensorType>(op.getType())
                     .getElementType()
                     .getAsOpaquePointer(),
                 unit);
    };
    auto close = [&](SmallVector<shard::AllReduceOp> &bucket, int64_t &bytes) {
      if (bucket.size() >= 2)
        buckets.push_back(bucket);
      bucket.clear();
      bytes = 0;
    };
    for (Operation &op : function.getBody().front()) {
      auto reduce = dyn_cast<shard::AllReduceOp>(op);
      if (!reduce)
        continue;
      auto &[bucket, bytesSoFar] = open[key(reduce)];
      int64_t bytes = tensorBytes(reduce.getType());
      bool fits = !bucket.empty() && bytesSoFar + bytes <= bucketBytes;
      if (fits) {
        // Its input must exist where the bucket's all-reduce will be.
        Operation *producer = reduce.getInput().getDefiningOp();
        fits = !producer || producer->isBeforeInBlock(bucket.front());
      }
      if (!fits)
        close(bucket, bytesSoFar);
      bucket.push_back(reduce);
      bytesSoFar += bytes;
    }
    for (auto &[k, entry] : open)
      close(entry.first, entry.second);
    for (SmallVector<shard::AllReduceOp> &bucket : buckets)
      mergeBucket(bucket, mesh);
  }

  /// Without a pipeline the buckets are made in the order their members'
  /// inputs are computed (the backward's order for the gradients), and each
  /// bucket's all-reduce is issued right after its last input exists, not
  /// where its first reader is (the update): on a GPU the communication
  /// stream sums a bucket while the compute stream runs the rest of the
  /// backward, as DDP's buckets do (docs/sharding.md, "Buckets"). Each
  /// member's piece is sliced out just before the member's first reader,
  /// so the compute stream waits for the bucket only there. A member joins
  /// the open bucket of its kind when it fits in `bucket-bytes` and the
  /// bucket, issued after its inputs, still comes before every member's
  /// first reader; else the open bucket closes. The sums are the same
  /// (each element is reduced alone), only their time moves.
  void bucketEarly(func::FuncOp function, const Mesh &mesh) {
    Block &block = function.getBody().front();
    DenseMap<Operation *, int64_t> position;
    SmallVector<Operation *> ops;
    for (Operation &op : block) {
      position[&op] = static_cast<int64_t>(ops.size());
      ops.push_back(&op);
    }
    constexpr int64_t never = std::numeric_limits<int64_t>::max();
    struct Member {
      shard::AllReduceOp op;
      int64_t produced; // position of the input's producer, -1: an argument
      int64_t firstRead;
      int64_t bytes;
    };
    SmallVector<Member> members;
    for (Operation *op : ops) {
      auto reduce = dyn_cast<shard::AllReduceOp>(op);
      if (!reduce)
        continue;
      Member m{reduce, -1, never, tensorBytes(reduce.getType())};
      if (Operation *producer = reduce.getInput().getDefiningOp())
        m.produced = position.lookup(block.findAncestorOpInBlock(*producer));
      for (Operation *user : reduce.getResult().getUsers())
        if (Operation *inBlock = block.findAncestorOpInBlock(*user))
          m.firstRead = std::min(m.firstRead, position.lookup(inBlock));
      members.push_back(m);
    }
    llvm::stable_sort(members, [](const Member &a, const Member &b) {
      return a.produced < b.produced;
    });
    using Key = std::tuple<std::vector<int16_t>, int, const void *>;
    struct Open {
      SmallVector<Member> members;
      int64_t bytes = 0, issueAfter = -1, firstRead = never;
    };
    std::map<Key, Open> open;
    SmallVector<Open> buckets;
    for (Member &m : members) {
      Key key(std::vector<int16_t>(m.op.getGridAxes().begin(),
                                   m.op.getGridAxes().end()),
              static_cast<int>(m.op.getReduction()),
              cast<RankedTensorType>(m.op.getType())
                  .getElementType()
                  .getAsOpaquePointer());
      Open &bucket = open[key];
      int64_t issueAfter = std::max(bucket.issueAfter, m.produced);
      int64_t firstRead = std::min(bucket.firstRead, m.firstRead);
      bool fits = !bucket.members.empty() &&
                  bucket.bytes + m.bytes <= bucketBytes &&
                  issueAfter < firstRead;
      if (!fits) {
        if (!bucket.members.empty())
          buckets.push_back(bucket);
        bucket = Open();
        issueAfter = m.produced;
        firstRead = m.firstRead;
      }
      bucket.members.push_back(m);
      bucket.bytes += m.bytes;
      bucket.issueAfter = issueAfter;
      bucket.firstRead = firstRead;
    }
    for (auto &[key, bucket] : open)
      if (!bucket.members.empty())
        buckets.push_back(bucket);
    for (const Open &bucket : buckets)
      issueBucket(block,
                  bucket.issueAfter < 0 ? nullptr : ops[bucket.issueAfter],
                  llvm::to_vector(llvm::map_range(
                      bucket.members,
                      [](const Member &m) { return m.op; })),
                  mesh);
  }

  /// One bucket of bucketEarly: a bucket of one is only moved (right after
  /// its input); a larger one becomes the concatenation, its all-reduce
  /// after `after` (or at the block's start), and each member's slice
  /// before the member's first reader.
  void issueBucket(Block &block, Operation *after,
                   ArrayRef<shard::AllReduceOp> bucket, const Mesh &mesh) {
    auto issueAt = [&](Operation *op) {
      if (after)
        op->moveAfter(after);
      else
        op->moveBefore(&block.front());
    };
    if (bucket.size() == 1) {
      issueAt(bucket.front());
      return;
    }
    shard::AllReduceOp first = bucket.front();
    OpBuilder b(first.getContext());
    if (after)
      b.setInsertionPointAfter(after);
    else
      b.setInsertionPointToStart(&block);
    // Named where it is issued (the last input's op: its model part and
    // phase), so a trace or a timeout places it in the backward.
    Location loc = after ? after->getLoc() : first.getLoc();
    Type element = cast<RankedTensorType>(first.getType()).getElementType();
    SmallVector<Value> flat;
    SmallVector<int64_t> sizes;
    int64_t total = 0;
    for (shard::AllReduceOp op : bucket) {
      auto type = cast<RankedTensorType>(op.getInput().getType());
      int64_t n = type.getNumElements();
      flat.push_back(ReshapeOp::create(
          b, loc, RankedTensorType::get({n}, element), op.getInput()));
      sizes.push_back(n);
      total += n;
    }
    auto wholeType = RankedTensorType::get({total}, element);
    Value whole = ConcatOp::create(b, loc, wholeType, flat,
                                   b.getI64IntegerAttr(0));
    auto merged = shard::AllReduceOp::create(
        b, loc, wholeType, first.getGridAttr(), first.getGridAxesAttr(), whole,
        first.getReductionAttr());
    setBucketAttributes(merged, bucket, mesh, b);
    int64_t offset = 0;
    for (auto [member, size] : llvm::zip(bucket, sizes)) {
      shard::AllReduceOp op = member;
      Operation *firstReader = nullptr;
      for (Operation *user : op.getResult().getUsers()) {
        Operation *inBlock = block.findAncestorOpInBlock(*user);
        if (inBlock && (!firstReader || inBlock->isBeforeInBlock(firstReader)))
          firstReader = inBlock;
      }
      if (firstReader) {
        b.setInsertionPoint(firstReader);
        auto piece = SliceOp::create(
            b, loc, RankedTensorType::get({size}, element),
            merged.getResult(), b.getDenseI64ArrayAttr({offset}),
            b.getDenseI64ArrayAttr({offset + size}), nullptr);
        Value back = ReshapeOp::create(b, loc, op.getType(), piece);
        op.getResult().replaceAllUsesWith(back);
      }
      offset += size;
    }
    for (shard::AllReduceOp op : bucket)
      op->erase();
  }

  /// The reason and the bytes each rank sends (a ring all-reduce) of a
  /// bucket's all-reduce.
  void setBucketAttributes(shard::AllReduceOp merged,
                           ArrayRef<shard::AllReduceOp> bucket,
                           const Mesh &mesh, OpBuilder &b) {
    shard::AllReduceOp first = bucket.front();
    int64_t n = mesh.ways(SmallVector<int64_t>(first.getGridAxes().begin(),
                                               first.getGridAxes().end()));
    int64_t bytes = tensorBytes(merged.getType());
    merged->setAttr("llmc.reason",
                    b.getStringAttr("bucket of " +
                                    std::to_string(bucket.size()) +
                                    " all-reduces: " +
                                    first->getAttrOfType<StringAttr>(
                                            "llmc.reason")
                                        .getValue()
                                        .str() +
                                    ", ..."));
    merged->setAttr("llmc.bytes_per_rank",
                    b.getI64IntegerAttr(2 * (n - 1) * bytes / n));
  }

  void mergeBucket(ArrayRef<shard::AllReduceOp> bucket, const Mesh &mesh) {
    shard::AllReduceOp first = bucket.front();
    OpBuilder b(first);
    Location loc = first.getLoc();
    Type element = cast<RankedTensorType>(first.getType()).getElementType();
    SmallVector<Value> flat;
    SmallVector<int64_t> sizes;
    int64_t total = 0;
    for (shard::AllReduceOp op : bucket) {
      auto type = cast<RankedTensorType>(op.getInput().getType());
      int64_t n = type.getNumElements();
      flat.push_back(ReshapeOp::create(
          b, loc, RankedTensorType::get({n}, element), op.getInput()));
      sizes.push_back(n);
      total += n;
    }
    auto wholeType = RankedTensorType::get({total}, element);
    Value whole = ConcatOp::create(b, loc, wholeType, flat,
                                   b.getI64IntegerAttr(0));
    auto merged = shard::AllReduceOp::create(
        b, loc, wholeType, first.getGridAttr(), first.getGridAxesAttr(), whole,
        first.getReductionAttr());
    setBucketAttributes(merged, bucket, mesh, b);
    int64_t offset = 0;
    for (auto [member, size] : llvm::zip(bucket, sizes)) {
      shard::AllReduceOp op = member;
      auto piece = SliceOp::create(
          b, loc, RankedTensorType::get({size}, element), merged.getResult(),
          b.getDenseI64ArrayAttr({offset}),
          b.getDenseI64ArrayAttr({offset + size}), nullptr);
      offset += size;
      Value back = ReshapeOp::create(b, loc, op.getType(), piece);
      op.getResult().replaceAllUsesWith(back);
    }
    // Erased last: the builder's insertion point is one of them.
    for (shard::AllReduceOp op : bucket)
      op->erase();
  }
};

} // namespace
} // namespace llmc
