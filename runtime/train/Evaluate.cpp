//===- Evaluate.cpp - the validation loss of a training run ---------------===//
#include "runtime/train/Evaluate.h"

#include "runtime/Session.h"
#include "runtime/Sharding.h"

#include <algorithm>
#include <set>

namespace llmc::rt {

Status batchRowsOf(const Executable &exe, const std::vector<int> &ranks,
                   std::vector<int64_t> &rows) {
  rows.clear();
  int tokens = exe.findArgument("tokens");
  if (tokens < 0)
    return Status::error(StatusCode::InvalidArgument,
                         "the program has no argument 'tokens'");
  Shape global;
  LLMC_RETURN_IF_ERROR(
      argumentGlobalShape(exe, static_cast<size_t>(tokens), global));
  if (global.empty())
    return Status::error(StatusCode::InvalidArgument,
                         "argument 'tokens' has no batch dimension");
  const TensorSharding &sharding = exe.arguments[tokens].sharding;
  std::set<int64_t> held;
  std::vector<int64_t> indices;
  for (int rank : ranks) {
    LLMC_RETURN_IF_ERROR(
        shardIndices(global, sharding, exe.mesh, rank, 0, indices));
    held.insert(indices.begin(), indices.end());
  }
  if (static_cast<int64_t>(held.size()) == global[0])
    return Status::ok(); // every row: the default
  rows.assign(held.begin(), held.end());
  return Status::ok();
}

CorpusOptions corpusOptionsFor(const TrainSettings &settings,
                               const std::string &role,
                               const TextCodec &codec) {
  CorpusOptions options;
  options.patterns = role == "val" ? settings.valData : settings.trainData;
  options.format = settings.dataFormat;
  options.vocabSize = settings.vocabSize;
  options.encode = codec.encoder();
  options.role = role;
  options.setting = role == "val" ? "[data] val" : "[data] train";
  return options;
}

Status Evaluator::create(const Executable &train, const TrainOptions &options,
                         const std::string &device, const TextCodec &codec,
                         std::unique_ptr<Evaluator> &evaluator) {
  evaluator.reset();
  std::unique_ptr<Evaluator> result(new Evaluator());
  // 1. The program and its session.
  result->program_ = train.companion("eval");
  if (!result->program_)
    return Status::error(StatusCode::InvalidArgument,
                         "the artifact has no \"eval\" program, which the "
                         "validation loss runs; compile it again with "
                         "`llmc compile RUN.toml -o FILE.llmcx` from a run "
                         "description with [data] val");
  const Executable &exe = *result->program_;
  result->lossOutput_ = exe.findOutput("loss");
  if (result->lossOutput_ < 0 && exe.outputs.size() == 1)
    result->lossOutput_ = 0;
  int tokens = exe.findArgument("tokens");
  if (result->lossOutput_ < 0 || tokens < 0 ||
      exe.findArgument("targets") < 0)
    return Status::error(StatusCode::InvalidArgument,
                         "the artifact's \"eval\" program is not a loss of "
                         "(tokens, targets); compile the artifact again");
  Shape shape;
  LLMC_RETURN_IF_ERROR(
      argumentGlobalShape(exe, static_cast<size_t>(tokens), shape));
  if (shape.size() != 2)
    return Status::error(StatusCode::InvalidArgument,
                         "the eval program's tokens are not [B, T]");
  result->batchSize_ = shape[0];
  result->seqLen_ = shape[1];
  if (device == "cuda") {
    if (!options.cudaSession)
      return Status::error(StatusCode::Unimplemented,
                           "no CUDA backend for the eval program");
    LLMC_RETURN_IF_ERROR(options.cudaSession(exe, result->session_));
  } else {
    SessionOptions sessionOptions;
    sessionOptions.threads = options.threads;
    std::unique_ptr<Session> cpu;
    LLMC_RETURN_IF_ERROR(Session::create(exe, sessionOptions, cpu));
    result->session_ = std::move(cpu);
  }

  // 2. The validation set, read in order; this process's rows only.
  CorpusOptions corpus = corpusOptionsFor(options.settings, "val", codec);
  LLMC_RETURN_IF_ERROR(TokenCorpus::open(corpus, result->corpus_));
  TokenLoaderOptions loaderOptions;
  loaderOptions.batchSize = result->batchSize_;
  loaderOptions.seqLen = result->seqLen_;
  loaderOptions.shuffle = false;
  loaderOptions.prefetch = options.prefetch;
  LLMC_RETURN_IF_ERROR(batchRowsOf(exe, result->session_->localRanks(),
                                   loaderOptions.rows));
  if (Status status =
          TokenLoader::open(result->corpus_, loaderOptions, result->loader_);
      !status)
    return Status::error(status.code(),
                         "the validation set: " + status.message());
  const int64_t wanted = options.settings.evalSteps;
  const uint64_t held = result->loader_->order().batchesPerEpoch();
  result->batches_ =
      static_cast<int64_t>(std::min<uint64_t>(static_cast<uint64_t>(wanted),
                                              held));
  if (options.log && result->batches_ < wanted)
    std::fprintf(options.log,
                 "[eval] steps = %lld, but %s holds %llu batches of %lld x "
                 "%lld tokens: evaluating those\n",
                 static_cast<long long>(wanted),
                 result->corpus_.describe().c_str(),
                 static_cast<unsigned long long>(held),
                 static_cast<long long>(result->batchSize_),
                 static_cast<long long>(result->seqLen_));
  evaluator = std::move(result);
  return Status::ok();
}

Status Evaluator::bindParameters(const DeviceSession &trained) {
  const Executable &from = trained.executable();
  for (const ArgumentInfo &arg : program_->arguments) {
    if (arg.role != ArgumentRole::Parameter)
      continue;
    int index = from.findArgument(arg.name);
    if (index < 0)
      return Status::error(StatusCode::InvalidArgument,
                           "the eval program's parameter '" + arg.name +
                               "' is not an argument of the training step; "
                               "compile the artifact again");
    HostTensor host;
    LLMC_RETURN_IF_ERROR(
        trained.argumentToHost(static_cast<size_t>(index), host));
    const TensorRef &t = host.view;
    LLMC_RETURN_IF_ERROR(session_->setArgument(
        arg.name, t.dtype, t.shape, t.data,
        static_cast<size_t>(t.numElements()) * dtypeSize(t.dtype)));
  }
  return Status::ok();
}

Status Evaluator::evaluate(double &loss) {
  loss = 0;
  LLMC_RETURN_IF_ERROR(loader_->setPosition(loader_->order().start()));
  TokenBatch batch;
  Shape shape = {batchSize_, seqLen_};
  double sum = 0;
  for (int64_t b = 0; b < batches_; ++b) {
    LLMC_RETURN_IF_ERROR(loader_->next(batch));
    size_t bytes = batch.tokens.size() * sizeof(int32_t);
    LLMC_RETURN_IF_ERROR(session_->setArgument("tokens", DType::I32, shape,
                                               batch.tokens.data(), bytes));
    LLMC_RETURN_IF_ERROR(session_->setArgument("targets", DType::I32, shape,
                                               batch.targets.data(), bytes));
    if (Status status = session_->run(); !status)
      return Status::error(status.code(),
                           "validation batch " + std::to_string(b + 1) +
                               ": " + status.message());
    HostTensor out;
    LLMC_RETURN_IF_ERROR(
        session_->outputToHost(static_cast<size_t>(lossOutput_), out));
    sum += scalarAsDouble(out.view);
  }
  loss = sum / static_cast<double>(batches_);
  return Status::ok();
}

} // namespace llmc::rt
