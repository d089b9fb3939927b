//===- RunDescription.cpp - the run description (TOML) parser -------------===//
//
// Turns a run description into a RunDescription: each section is read with
// SectionReader (types, ranges, unknown keys), then the rules that tie keys
// together are checked (the microbatches dividing the batch, sp needing tp,
// ...). Every problem of the file is reported, each key at most once; keys
// that later issues implement are recorded as pending. [model] is in
// ModelSection.cpp; docs/run-description.md is the user-facing contract.
//
//===----------------------------------------------------------------------===//
#include "frontend/config/RunParser.h"

#include <algorithm>
#include <glob.h>

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

namespace llmc {
namespace config_detail {

using llvm::StringRef;

ParseOutcome RunParser::parse(const std::string &text) {
  ParseOutcome outcome;
  toml::parse_result result =
      toml::parse(std::string_view(text), std::string_view(run.path));
  if (!result) {
    const toml::parse_error &error = result.error();
    diagnostics.error(diagnostics.locate(error.source().begin), "",
                      "malformed TOML: " + lowerFirst(error.description()) +
                          "; fix the syntax (https://toml.io/en/v1.0.0)");
    outcome.diagnostics = std::move(diagnostics.diagnostics);
    return outcome;
  }
  sections = readSections(diagnostics, result.table());

  // [train] first: the model's defaults and checks use seq_len.
  parseTrain();
  parseModel();
  checkActivations();
  parsePrecision();
  parseParallel();
  parseMemory();
  parseData();
  parseEval();
  parseCheckpoint();

  outcome.diagnostics = std::move(diagnostics.diagnostics);
  outcome.diagnostics.insert(outcome.diagnostics.end(), hfDiagnostics.begin(),
                             hfDiagnostics.end());
  sortDiagnostics(outcome.diagnostics, run.path);
  if (!hasErrors(outcome.diagnostics))
    outcome.description = std::move(run);
  return outcome;
}

std::string RunParser::resolve(StringRef path) const {
  if (path.empty() || llvm::sys::path::is_absolute(path))
    return path.str();
  llvm::SmallString<256> resolved(llvm::sys::path::parent_path(run.path));
  llvm::sys::path::append(resolved, path);
  return std::string(resolved.str());
}

std::optional<std::string> RunParser::existingFile(SectionReader &s,
                                                   StringRef key) {
  std::optional<std::string> value = s.string(key);
  if (!value)
    return std::nullopt;
  std::string resolved = resolve(*value);
  if (!value->empty() && llvm::sys::fs::is_regular_file(resolved))
    return resolved;
  s.error(key, "expected " + key.str() + " to name an existing file, got \"" +
                   *value + "\" (looked for '" + resolved +
                   "'); fix the path, which is relative to this file's "
                   "directory");
  return std::nullopt;
}

void RunParser::parseTrain() {
  SectionReader s = reader("train");
  TrainConfig &t = run.train;
  assign(t.batchSize, s.integer("batch_size", kTokens));
  assign(t.seqLen, s.integer("seq_len", kTokens));
  assign(t.steps, s.integer("steps", kPositive));
  assign(t.learningRate, s.number("learning_rate", kPositive));
  assign(t.minLearningRate, s.number("min_learning_rate", kNonNegative));
  assign(t.warmupSteps, s.integer("warmup_steps", kNonNegative));
  assign(t.schedule, s.choice<LrSchedule>(
                         "schedule", {{"cosine", LrSchedule::Cosine},
                                      {"linear", LrSchedule::Linear},
                                      {"constant", LrSchedule::Constant}}));
  assign(t.weightDecay, s.number("weight_decay", kNonNegative));
  assign(t.decayAll, s.boolean("decay_all"));
  assign(t.beta1, s.number("beta1", Bound::halfOpen(0, 1)));
  assign(t.beta2, s.number("beta2", Bound::halfOpen(0, 1)));
  assign(t.epsilon, s.number("epsilon", kPositive));
  assign(t.gradClip, s.number("grad_clip", kNonNegative));
  assign(t.microbatches, s.integer("microbatches", kTokens));
  assign(t.seed, s.integer("seed", kNonNegative));
  assign(t.logEvery, s.integer("log_every", kPositive));

  // Rules between keys; each is reported on the key that was set, since the
  // defaults always satisfy them.
  auto usable = [&](StringRef a, StringRef b) {
    return s.given(a) && !s.failed(a) && !s.failed(b);
  };
  // A rate is a step size per weight: past 10 AdamW diverges at step 1,
  // and 1e300 overflows the first update.
  if (s.given("learning_rate") && !s.failed("learning_rate") &&
      t.learningRate > 10)
    s.error("learning_rate",
            "expected learning_rate <= 10, got " +
                formatNumber(t.learningRate) +
                "; AdamW moves each weight by about the rate every step: "
                "use a rate such as 3e-4");
  if (usable("min_learning_rate", "learning_rate") &&
      t.minLearningRate > t.learningRate)
    s.error("min_learning_rate",
            "expected min_learning_rate <= learning_rate " +
                formatNumber(t.learningRate) + ", got " +
                formatNumber(t.minLearningRate) +
                "; lower min_learning_rate or raise learning_rate");
  if (usable("warmup_steps", "steps") && t.warmupSteps >= t.steps)
    s.error("warmup_steps", "expected warmup_steps < steps " +
                                std::to_string(t.steps) + ", got " +
                                std::to_string(t.warmupSteps) +
                                "; lower warmup_steps or raise steps");
  if (usable("microbatches", "batch_size") && t.batchSize % t.microbatches != 0)
    s.error("microbatches",
            "expected microbatches to divide batch_size " +
                std::to_string(t.batchSize) + ", got " +
                std::to_string(t.microbatches) +
                "; set microbatches to one of " +
                listDivisors(t.batchSize, [](int64_t) { return true; }));

  seqLenUsable = !s.failed("seq_len");
  seqLenGiven = s.given("seq_len");
  seqLenSite = s.at("seq_len");
  batchUsable = !s.failed("batch_size");
  batchSite = s.at(s.given("batch_size") ? "batch_size" : "seq_len");
}

void RunParser::checkActivations() {
  const TrainConfig &t = run.train;
  const ModelConfig &m = run.model;
  if (!batchUsable || !seqLenUsable || !modelUsable())
    return;
  const double tokens =
      static_cast<double>(t.batchSize) * static_cast<double>(t.seqLen);
  const std::string step = "batch_size " + std::to_string(t.batchSize) +
                           " x seq_len " + std::to_string(t.seqLen);
  if (tokens > 1099511627776.0) {
    diagnostics.error(batchSite, "train.batch_size",
                      "expected at most 2^40 tokens a step, got " + step +
                          " = " + formatNumber(tokens) +
                          "; lower batch_size or seq_len");
    return;
  }
  // An MoE layer's expert MLPs hold each expert's capacity of rows:
  // ceil(capacity_factor x tokens x k / experts), at most the tokens.
  const double experts =
      m.family == ModelFamily::Moe
          ? std::min(static_cast<double>(m.numExperts),
                     static_cast<double>(m.expertsPerToken) * m.capacityFactor)
          : 1.0;
  const double widest = std::max(
      {static_cast<double>(m.vocabSize),
       static_cast<double>(m.intermediateSize) * experts,
       4.0 * static_cast<double>(m.hiddenSize)});
  if (tokens * widest > 281474976710656.0)
    diagnostics.error(batchSite, "train.batch_size",
                      "expected the largest activation (" + step +
                          " tokens x " + formatNumber(widest) +
                          ", the widest of vocab_size, ffn_width (times "
                          "the routed rows of an MoE) and 4 x width) to be at most 2^48 elements, got " +
                          formatNumber(tokens * widest) +
                          "; lower batch_size or seq_len");
}

void RunParser::parsePrecision() {
  SectionReader s = reader("precision");
  PrecisionConfig &p = run.precision;
  assign(p.policy, s.choice<PrecisionPolicy>(
                       "policy", {{"fp32", PrecisionPolicy::Fp32},
                                  {"bf16", PrecisionPolicy::Bf16},
                                  {"fp16", PrecisionPolicy::Fp16},
                                  {"fp8", PrecisionPolicy::Fp8}}));
  assign(p.initialLossScale, s.number("initial_loss_scale", kPositive));
  assign(p.lossScaleGrowthInterval,
         s.integer("loss_scale_growth_interval", kPositive));
  // Loss scaling exists for fp16's narrow exponent; bf16 and fp32 have f32's.
  if (!s.failed("policy") && p.policy != PrecisionPolicy::Fp16)
    for (StringRef key : {"initial_loss_scale", "loss_scale_growth_interval"})
      if (s.given(key))
        s.error(key, "expected " + key.str() +
                         " only with policy \"fp16\", got policy " +
                         (s.given("policy") ? s.literal("policy")
                                            : "\"fp32\" (the default)") +
                         "; remove " + key.str() + " or set policy = \"fp16\"");
}

/// "auto", "cpu", "cuda", or "cpu:N"/"cuda:N" with N > 0; the N (0 if none).
static std::optional<int64_t> parseDevices(StringRef devices) {
  auto [kind, count] = devices.split(':');
  if (kind != "auto" && kind != "cpu" && kind != "cuda")
    return std::nullopt;
  if (!devices.contains(':'))
    return 0;
  int64_t n = 0;
  if (kind == "auto" || count.getAsInteger(10, n) || n <= 0)
    return std::nullopt;
  return n;
}

void RunParser::parseParallel() {
  SectionReader s = reader("parallel");
  ParallelConfig &p = run.parallel;
  std::optional<int64_t> deviceCount;
  if (std::optional<std::string> devices = s.string("devices")) {
    deviceCount = parseDevices(*devices);
    if (deviceCount)
      p.devices = *devices;
    else
      s.error("devices",
              "expected devices to be \"auto\", \"cpu\", "
              "\"cpu:N\", \"cuda\" or \"cuda:N\" with N > 0, got \"" +
                  *devices + "\"; write e.g. devices = \"cuda:8\"");
  }
  if (std::optional<std::string> mesh = s.string("mesh")) {
    if (*mesh == "auto")
      p.autoMesh = true;
    else
      s.error("mesh", "expected mesh to be \"auto\", got \"" + *mesh +
                          "\"; write mesh = \"auto\" to search for a mesh, or "
                          "remove it and set dp, tp, pp, cp and ep");
  }
  assign(p.dp, s.integer("dp", kAtLeastOne));
  assign(p.tp, s.integer("tp", kAtLeastOne));
  assign(p.pp, s.integer("pp", kAtLeastOne));
  assign(p.cp, s.integer("cp", kAtLeastOne));
  assign(p.ep, s.integer("ep", kAtLeastOne));
  assign(p.sequenceParallel, s.boolean("sp"));
  assign(p.zero, s.integer("zero", Bound::closed(0, 3)));
  assign(p.pipelineSchedule,
         s.choice<PipelineSchedule>(
             "pipeline_schedule",
             {{"gpipe", PipelineSchedule::GPipe},
              {"1f1b", PipelineSchedule::OneFOneB},
              {"interleaved", PipelineSchedule::Interleaved}}));
  assign(p.virtualStages, s.integer("virtual_stages", kAtLeastOne));
  assign(p.pipelineBoundaries,
         s.integerList("pipeline_boundaries", kAtLeastOne));
  checkMesh(s, deviceCount);
  checkPipeline(s);

  // Pending: what asks for more than one device's behaviour of today. dp,
  // tp, ep, sp and zero run on CPU virtual devices (llmc-partition, #8); several
  // GPUs need the multi-process runtime (#9). mesh = "auto" is searched by
  // the driver (planner/Search.h). The mesh checks above reject what cannot
  // work at all.
  // A mesh of several ranks on "cuda:N" runs under `llmc launch`; "cuda:N"
  // for a one-rank program asks for data parallelism nobody set up.
  StringRef devices = p.devices;
  if (devices.starts_with("cuda:") && deviceCount.value_or(0) > 1 &&
      p.dp * p.tp * p.pp * p.cp * p.ep == 1)
    s.recordPending(run.pending, "devices", "#9");
}

/// The pipeline keys against pp, the schedule and the model's layers
/// (llmc-split-pipeline cuts the layers into pp x virtual_stages chunks).
void RunParser::checkPipeline(SectionReader &s) {
  const ParallelConfig &p = run.parallel;
  if (s.failed("pp"))
    return;
  bool interleaved = p.pipelineSchedule == PipelineSchedule::Interleaved;
  if (p.virtualStages != 1 && !s.failed("virtual_stages") &&
      !s.failed("pipeline_schedule") && !interleaved)
    s.error("virtual_stages",
            "expected virtual_stages = 1 without pipeline_schedule = "
            "\"interleaved\", got " +
                std::to_string(p.virtualStages) +
                "; set pipeline_schedule = \"interleaved\" (model chunks per "
                "stage) or remove virtual_stages");
  // A schedule alone (or virtual_stages = 1) is harmless with one stage.
  for (StringRef key : {"virtual_stages", "pipeline_boundaries"})
    if (s.given(key) && !s.failed(key) && p.pp <= 1 &&
        (key == "virtual_stages" ? p.virtualStages != 1
                                 : !p.pipelineBoundaries.empty()))
      s.error(key, "expected pp > 1 with " + key.str() + ", got pp = " +
                       std::to_string(p.pp) +
                       "; set pp to 2 or more, or remove " + key.str());
  if (p.pp <= 1)
    return;
  int64_t chunks = p.pp * p.virtualStages;
  int64_t micro = run.train.microbatches;
  if (interleaved && !s.failed("pipeline_schedule") &&
      !diagnostics.hasMessage("train.microbatches") && micro % p.pp != 0)
    s.error("pipeline_schedule",
            "expected [train] microbatches to be a multiple of pp " +
                std::to_string(p.pp) +
                " with pipeline_schedule = \"interleaved\", got " +
                std::to_string(micro) + "; set microbatches = " +
                std::to_string((micro + p.pp - 1) / p.pp * p.pp));
  int64_t layers = run.model.numLayers;
  if (layers > 0 && !diagnostics.hasMessage("model.layers") &&
      layers < chunks && !s.failed("virtual_stages"))
    s.error("pp", "expected at most " + std::to_string(layers) +
                      " pipeline chunks (pp x virtual_stages, one layer "
                      "each at least) for " +
                      std::to_string(layers) + " layers, got " +
                      std::to_string(chunks) + "; lower pp or virtual_stages");
  if (!p.pipelineBoundaries.empty() && !s.failed("pipeline_boundaries")) {
    const std::vector<int64_t> &b = p.pipelineBoundaries;
    bool increasing = std::is_sorted(b.begin(), b.end()) &&
                      std::adjacent_find(b.begin(), b.end()) == b.end();
    if (static_cast<int64_t>(b.size()) != chunks - 1)
      s.error("pipeline_boundaries",
              "expected " + std::to_string(chunks - 1) +
                  " pipeline_boundaries (the first layer of every chunk "
                  "after the first, pp x virtual_stages - 1), got " +
                  std::to_string(b.size()));
    else if (!increasing || (layers > 0 && b.back() >= layers)) {
      std::string given;
      for (int64_t layer : b)
        given += (given.empty() ? "[" : ", ") + std::to_string(layer);
      s.error("pipeline_boundaries",
              "expected increasing layer indices in [1, " +
                  std::to_string(layers) + ") in pipeline_boundaries, got " +
                  given + "]");
    }
  }
}

bool RunParser::modelUsable() const {
  if (!section("model") || hasErrors(hfDiagnostics))
    return false;
  for (StringRef key : {"family", "hf_config", "vocab_size", "width", "heads",
                        "kv_heads", "ffn_width"})
    if (diagnostics.hasMessage("model." + key.str()))
      return false;
  const ModelConfig &m = run.model;
  return m.vocabSize > 0 && m.numHeads > 0 && m.numKvHeads > 0 &&
         m.intermediateSize > 0;
}

/// "dp 4 x tp 2": the axes of more than one rank.
static std::string meshText(const ParallelConfig &p) {
  std::string out;
  for (auto [name, size] : {std::pair<const char *, int64_t>{"dp", p.dp},
                            {"tp", p.tp},
                            {"pp", p.pp},
                            {"cp", p.cp},
                            {"ep", p.ep}})
    if (size > 1)
      out += (out.empty() ? "" : " x ") + std::string(name) + " " +
             std::to_string(size);
  return out.empty() ? "every axis 1" : out;
}

void RunParser::checkMesh(SectionReader &s,
                          std::optional<int64_t> deviceCount) {
  const ParallelConfig &p = run.parallel;
  // The model and the batch must split evenly.
  if (p.tp > 1 && !s.failed("tp") && modelUsable()) {
    std::string message = tensorParallelError(run.model, p.tp);
    if (!message.empty())
      s.error("tp", message);
  }
  if (p.dp > 1 && !s.failed("dp") &&
      !diagnostics.hasMessage("train.batch_size") &&
      !diagnostics.hasMessage("train.microbatches")) {
    std::string message = dataParallelError(run.train, p.dp);
    if (!message.empty())
      s.error("dp", message);
  }
  // Expert parallelism (docs/sharding.md): the ep ranks split the experts
  // and, like dp, the tokens of a microbatch.
  if (p.ep > 1 && !s.failed("ep") && !s.failed("dp") && modelUsable() &&
      !diagnostics.hasMessage("train.batch_size") &&
      !diagnostics.hasMessage("train.microbatches")) {
    std::string message = expertParallelError(run.model, run.train, p.dp, p.ep);
    if (!message.empty())
      s.error("ep", message);
  }
  if (p.sequenceParallel && !s.failed("tp") && p.tp <= 1)
    s.error("sp",
            "expected tp > 1 with sp = true, got tp = " + std::to_string(p.tp) +
                "; set tp to 2 or more, or remove sp (sequence "
                "parallelism splits activations over the tp axis)");
  else if (p.sequenceParallel && !s.failed("tp") && seqLenUsable &&
           run.train.seqLen % p.tp != 0)
    s.error("sp", "expected seq_len to be a multiple of tp " +
                      std::to_string(p.tp) + " with sp = true, got seq_len " +
                      std::to_string(run.train.seqLen) + "; set seq_len to " +
                      std::to_string((run.train.seqLen + p.tp - 1) / p.tp *
                                     p.tp) +
                      " or remove sp (sequence parallelism splits the "
                      "sequence over the tp ranks)");
  // Context parallelism cuts the sequence into 2·cp chunks (rank r holds
  // chunks r and 2·cp-1-r: docs/sharding.md).
  if (p.cp > 1 && !s.failed("cp") && seqLenUsable &&
      run.train.seqLen % (2 * p.cp) != 0)
    s.error("cp", "expected seq_len to be a multiple of 2*cp = " +
                      std::to_string(2 * p.cp) + ", got seq_len " +
                      std::to_string(run.train.seqLen) + "; set seq_len to " +
                      std::to_string((run.train.seqLen + 2 * p.cp - 1) /
                                     (2 * p.cp) * (2 * p.cp)) +
                      " or choose cp so that 2*cp divides it (context "
                      "parallelism gives each rank an early and a late chunk "
                      "of the sequence)");
  if (p.zero > 0 && !s.failed("zero") && !s.failed("dp") && p.dp <= 1)
    s.error("zero", "expected dp > 1 with zero = " + std::to_string(p.zero) +
                        ", got dp = " + std::to_string(p.dp) +
                        "; set dp to 2 or more, or remove zero (ZeRO shards "
                        "the optimizer state, gradients and parameters over "
                        "the dp ranks)");

  // 3. One rank per device: "cpu:N" has exactly N, "cpu" as many as the mesh
  // needs; more than one GPU is `llmc launch`'s, one process per rank.
  if (s.failed("devices") || p.autoMesh)
    return;
  for (StringRef key : {"dp", "tp", "pp", "cp", "ep"})
    if (s.failed(key))
      return;
  int64_t ranks = p.dp * p.tp * p.pp * p.cp * p.ep;
  std::string mesh = std::to_string(ranks) +
                     (ranks == 1 ? " rank (" : " ranks (") + meshText(p) + ")";
  StringRef kind = StringRef(p.devices).split(':').first;
  std::string given = "\"" + p.devices + "\"" +
                      (s.given("devices") ? "" : " (the default)");
  std::string onCpu = "devices = \"cpu:" + std::to_string(ranks) + "\"";
  if (kind == "cpu") {
    if (deviceCount.value_or(0) > 0 && *deviceCount != ranks)
      s.error("devices", "expected devices \"cpu:N\" with N the mesh's " +
                             mesh + ", got " + given + "; set " + onCpu +
                             ", or devices = \"cpu\" for as many CPU "
                             "devices as the mesh needs");
    return;
  }
  std::string launch = "`llmc launch -n " + std::to_string(ranks) +
                       " RUN.toml` (one process per GPU, docs/distributed.md)";
  if (kind == "cuda" && ranks > 1) {
    if (deviceCount.value_or(0) > 0 && *deviceCount != ranks)
      s.error("devices", "expected devices \"cuda:N\" with N the mesh's " +
                             mesh + ", got " + given + "; set devices = "
                             "\"cuda:" + std::to_string(ranks) +
                             "\" and train with " + launch);
    return;
  }
  if (ranks > 1)
    s.error("devices", "expected one rank on devices " + given + ", got " +
                           mesh + "; for GPUs set devices = \"cuda\" and "
                           "train with " + launch + ", or set " + onCpu +
                           " to run this mesh on CPU devices");
}

void RunParser::parseMemory() {
  SectionReader s = reader("memory");
  MemoryConfig &m = run.memory;
  assign(m.budgetGiB, s.number("budget_gib", kBudgetGiB));
  assign(m.remat,
         s.choice<RematPolicy>("remat", {{"none", RematPolicy::None},
                                         {"selective", RematPolicy::Selective},
                                         {"full", RematPolicy::Full},
                                         {"auto", RematPolicy::Auto}}));
}

std::optional<std::vector<std::string>>
RunParser::dataFiles(SectionReader &s, StringRef key) {
  std::optional<std::vector<std::string>> items = s.stringList(key);
  if (!items)
    return std::nullopt;
  std::vector<std::string> resolved;
  for (const std::string &item : *items) {
    std::string path = resolve(item);
    if (item.find_first_of("*?[") != std::string::npos) {
      glob_t matches{};
      int result = ::glob(path.c_str(), 0, nullptr, &matches);
      size_t count = result == 0 ? matches.gl_pathc : 0;
      ::globfree(&matches);
      if (count == 0) {
        s.error(key, "expected the pattern \"" + item +
                         "\" to match files, but '" + path +
                         "' matches none; fix the directory or the name "
                         "(relative to this file's directory; llmc tokenize "
                         "writes DIR/train_000000.bin, DIR/val_000000.bin)");
        return std::nullopt;
      }
    } else if (!llvm::sys::fs::is_regular_file(path)) {
      s.error(key, "expected " + key.str() + " to name existing files, got \"" +
                       item + "\" (looked for '" + path +
                       "'); fix the path, which is relative to this file's "
                       "directory");
      return std::nullopt;
    }
    resolved.push_back(path);
  }
  return resolved;
}

void RunParser::parseData() {
  SectionReader s = reader("data");
  DataConfig &d = run.data;
  // train, or path (one file); val, or validation_path (its old name).
  for (auto [key, alias, field] :
       {std::make_tuple("train", "path", &d.train),
        std::make_tuple("val", "validation_path", &d.val)}) {
    if (s.given(key) && s.given(alias)) {
      s.error(alias, std::string("expected one of ") + key + " and " + alias +
                         ", got both; " + alias + " is the one-file form of " +
                         key + ": remove it");
      continue;
    }
    assign(*field, dataFiles(s, s.given(alias) ? alias : key));
  }
  assign(d.format,
         s.choice<DataFormat>("format", {{"auto", DataFormat::Auto},
                                         {"tokens", DataFormat::Tokens},
                                         {"u16", DataFormat::U16},
                                         {"text", DataFormat::Text}}));
  assign(d.tokenizer, existingFile(s, "tokenizer"));
  assign(d.shuffle, s.boolean("shuffle"));
}

void RunParser::parseEval() {
  SectionReader s = reader("eval");
  EvalConfig &e = run.eval;
  assign(e.every, s.integer("every", kNonNegative));
  assign(e.steps, s.integer("steps", kPositive));
  if ((s.given("every") || s.given("steps")) && run.data.val.empty() &&
      !s.failed("every") && !s.failed("steps"))
    s.error(s.given("every") ? "every" : "steps",
            "expected [data] val to name the validation set that [eval] "
            "evaluates, got no val; add e.g. val = \"data/val_*.bin\" to "
            "[data], or remove [eval]");
}

void RunParser::parseCheckpoint() {
  SectionReader s = reader("checkpoint");
  CheckpointConfig &c = run.checkpoint;
  if (std::optional<std::string> dir = s.string("dir")) {
    if (dir->empty())
      s.error("dir", "expected dir to be a non-empty path, got \"\"; write "
                     "e.g. dir = \"checkpoints\"");
    else
      c.directory = resolve(*dir);
  }
  assign(c.every, s.integer("every", kNonNegative));
  assign(c.keep, s.integer("keep", kAtLeastOne));
}

} // namespace config_detail

using namespace config_detail;

ParseOutcome parseRunDescriptionText(const std::string &text,
                                     const std::string &path) {
  return RunParser(path).parse(text);
}

ParseOutcome parseRunDescription(const std::string &path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer) {
    ParseOutcome outcome;
    outcome.diagnostics.push_back(
        makeError({path, 0, 0}, "cannot read the run description: " +
                                    lowerFirst(buffer.getError().message()) +
                                    "; check the path"));
    return outcome;
  }
  return parseRunDescriptionText((*buffer)->getBuffer().str(), path);
}

} // namespace llmc
