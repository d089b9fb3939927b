//===- LlmcVerify.cpp - llmc verify: a mesh against one device ------------===//
//
// The check to run before trusting a new parallel configuration: train a few
// AdamW steps of the run's [parallel] mesh and of the same run compiled for
// one device, both on CPU virtual devices, from the same initial parameters
// (written once, bound by both) and the same data, and compare
//   losses and grad norms   every step, relative difference;
//   gradients               AdamW's first moment after step 1 (from the
//                           step-1 checkpoints): m1 = (1 - beta1) * clipped
//                           g1, so its relative difference is the gradient's;
//   parameters              after the last step;
// the last two as relative L2 differences per tensor, reported per model part
// (transformer.h.0.attn, model.layers.1.mlp, transformer.wte).
// With --device cuda the mesh runs on virtual ranks of GPU 0 (every rank in
// this process, runtime/cuda/session/VirtualRanks.h) and is compared, with
// the same tables, against one GPU and against the mesh on CPU devices.
// See docs/verify.md.
//
//===----------------------------------------------------------------------===//
#include "tools/LlmcDriver.h"

#include "runtime/Sharding.h"
#include "runtime/io/Safetensors.h"
#include "runtime/train/Checkpoint.h"
#include "runtime/train/Init.h"

#ifdef LLMC_HAVE_CUDA
#include "runtime/cuda/session/CudaSession.h"
#include "runtime/cuda/session/VirtualRanks.h"
#endif

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"

#include <cmath>
#include <vector>

namespace llmc::driver {

namespace {

std::string joinPath(llvm::StringRef a, llvm::StringRef b,
                     llvm::StringRef c = "", llvm::StringRef d = "") {
  llvm::SmallString<256> path(a);
  for (llvm::StringRef part : {b, c, d})
    if (!part.empty()) // append() adds a separator for an empty part
      llvm::sys::path::append(path, part);
  return std::string(path);
}

/// The model part of a parameter (or moment) name: the final .weight/.bias
/// dropped, and inside a layer (GPT-2's h.N, LLaMA's layers.N) everything
/// after the block: transformer.h.0.attn.c_attn.weight -> transformer.h.0.attn.
std::string modelPart(llvm::StringRef name) {
  if (name.ends_with(".weight"))
    name = name.drop_back(7);
  else if (name.ends_with(".bias"))
    name = name.drop_back(5);
  llvm::SmallVector<llvm::StringRef> parts;
  name.split(parts, '.');
  for (size_t i = 0; i + 2 < parts.size(); ++i) {
    unsigned layer;
    if ((parts[i] == "h" || parts[i] == "layers") &&
        !parts[i + 1].getAsInteger(10, layer))
      return llvm::join(llvm::ArrayRef(parts).take_front(i + 3), ".");
  }
  return name.str();
}

/// GPT-2's fused q/k/v bias: its key third has a zero gradient in exact
/// arithmetic (softmax ignores a constant added to every key), so AdamW moves
/// it by +-lr on rounding noise of either sign. It is left out.
bool isKeyBias(llvm::StringRef name) {
  return name.ends_with("attn.c_attn.bias");
}

/// The elements of a float tensor as doubles; false for other dtypes.
bool toDoubles(const rt::SafetensorsTensor &t, std::vector<double> &out) {
  size_t n = static_cast<size_t>(rt::numElements(t.shape));
  out.resize(n);
  for (size_t i = 0; i < n; ++i) {
    switch (t.dtype) {
    case rt::DType::F32: {
      float v;
      std::memcpy(&v, t.data + 4 * i, 4);
      out[i] = v;
      break;
    }
    case rt::DType::F64:
      std::memcpy(&out[i], t.data + 8 * i, 8);
      break;
    case rt::DType::BF16:
    case rt::DType::F16: {
      uint16_t bits;
      std::memcpy(&bits, t.data + 2 * i, 2);
      out[i] = t.dtype == rt::DType::BF16 ? rt::bf16ToFloat(bits)
                                          : rt::f16ToFloat(bits);
      break;
    }
    default:
      return false;
    }
  }
  return true;
}

/// ||a - b|| / ||b|| over every index outside [skipBegin, skipEnd); 0 when
/// a equals b there, infinite when only b is zero.
double relativeL2(const std::vector<double> &a, const std::vector<double> &b,
                  size_t skipBegin, size_t skipEnd) {
  double diff = 0, ref = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    if (i >= skipBegin && i < skipEnd)
      continue;
    diff += (a[i] - b[i]) * (a[i] - b[i]);
    ref += b[i] * b[i];
  }
  if (diff == 0)
    return 0;
  return ref == 0 ? INFINITY : std::sqrt(diff / ref);
}

double relativeDifference(double a, double b) {
  if (a == b)
    return 0;
  return b == 0 ? INFINITY : std::fabs(a - b) / std::fabs(b);
}

/// The worst differences of one model part.
struct PartRow {
  std::string name;
  int tensors = 0;
  double gradient = 0, parameter = 0;
  std::string worstGradient, worstParameter; ///< tensor names
};

/// What a run left behind.
struct RunResult {
  rt::TrainReport report;
  std::string checkpoints; ///< the checkpoint root
};

int fail(const std::string &message) {
  llvm::errs() << "llmc verify: " << message << "\n";
  return kExitRejected;
}

/// Writes the parameters of `exe` drawn from their initializers with `seed`
/// to `path`; those of model part `perturbPart` (when not empty) are moved
/// by 1% (x -> 1.01 x + 1e-3) into `perturbedPath` too.
int writeInitialParameters(const rt::Executable &exe, uint64_t seed,
                           const std::string &path,
                           const std::string &perturbPart,
                           const std::string &perturbedPath) {
  std::vector<std::vector<uint8_t>> storage;
  storage.reserve(exe.arguments.size());
  std::map<std::string, rt::SafetensorsTensor> tensors;
  for (size_t i = 0; i < exe.arguments.size(); ++i) {
    const rt::ArgumentInfo &arg = exe.arguments[i];
    if (arg.role != rt::ArgumentRole::Parameter)
      continue;
    rt::SafetensorsTensor t;
    t.dtype = exe.ranks.front().values[arg.value].dtype;
    storage.emplace_back();
    if (rt::Status s = rt::argumentGlobalShape(exe, i, t.shape); !s)
      return fail(s.message());
    if (rt::Status s = rt::initialArgumentBytes(exe, i, seed, storage.back());
        !s)
      return fail(s.message());
    t.data = storage.back().data();
    t.bytes = storage.back().size();
    tensors[arg.name] = t;
  }
  if (rt::Status s = rt::writeSafetensors(path, tensors); !s)
    return fail(s.message());
  if (perturbPart.empty())
    return kExitOk;
  std::vector<std::vector<uint8_t>> perturbed;
  perturbed.reserve(tensors.size());
  for (auto &[name, t] : tensors) {
    if (modelPart(name) != perturbPart)
      continue;
    if (t.dtype != rt::DType::F32)
      return fail("--perturb-part expects f32 parameters, got " +
                  std::string(rt::dtypeName(t.dtype)) + " for " + name);
    perturbed.emplace_back(t.data, t.data + t.bytes);
    float *values = reinterpret_cast<float *>(perturbed.back().data());
    for (size_t j = 0; j < t.bytes / 4; ++j)
      values[j] = 1.01f * values[j] + 1e-3f;
    t.data = perturbed.back().data();
  }
  if (perturbed.empty())
    return fail("--perturb-part: no parameter of model part '" + perturbPart +
                "'");
  if (rt::Status s = rt::writeSafetensors(perturbedPath, tensors); !s)
    return fail(s.message());
  return kExitOk;
}

/// Where a run trains: CPU virtual devices (no factory), or the GPU through
/// `factory` (one GPU, or virtual ranks).
struct RunDevice {
  rt::DeviceSessionFactory factory = nullptr;
  rt::DeviceCountFn count = nullptr;
};

/// Trains `steps` steps of `exe` on `device`, saving a checkpoint after
/// every step under `dir`/checkpoints.
int trainRun(const rt::Executable &exe, const std::string &dir,
             const std::string &weights, int64_t steps, unsigned threads,
             RunResult &result, const RunDevice &device = RunDevice()) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return fail("cannot create the directory '" + dir + "': " + ec.message());
  rt::TrainOptions train;
  if (rt::Status s = rt::readTrainSettings(exe.metadata, train.settings); !s)
    return fail(s.message());
  // The schedule (compiled into the program) still spans [train] steps.
  train.settings.steps = std::max(train.settings.steps, steps);
  train.settings.devices = device.factory ? "cuda" : "cpu";
  train.cudaSession = device.factory;
  train.cudaDeviceCount = device.count;
  result.checkpoints = joinPath(dir, "checkpoints");
  train.settings.checkpointDir = result.checkpoints;
  train.settings.checkpointEvery = 1;
  train.settings.checkpointKeep = steps;
  train.settings.sampleTokens = 0;
  train.weightsPath = weights;
  train.metricsPath = joinPath(dir, "metrics.jsonl");
  train.threads = threads;
  train.stopAfterStep = steps;
  train.log = nullptr;
  if (rt::Status s = rt::train(exe, train, result.report); !s)
    return fail(s.message());
  return kExitOk;
}

/// Reads `file` of the checkpoint of `step` under `root`.
int readCheckpointFile(const std::string &root, int64_t step,
                       const char *file, rt::SafetensorsFile &out) {
  std::string path = joinPath(root, rt::checkpointName(step), file);
  if (rt::Status s = rt::readSafetensors(path, out); !s)
    return fail(s.message());
  return kExitOk;
}

/// Step 1: the input is a run description whose [parallel] mesh has more
/// than one device. -1 to go on, else the exit code.
int checkVerifyInput(const VerifyCommand &options, llvm::raw_ostream &os) {
  const std::string &input = options.input;
  if (llmc::classifySource(input) != llmc::SourceKind::RunDescription) {
    llvm::errs() << "llmc verify: expected a run description (.toml) with a "
                    "[parallel] mesh, got '"
                 << input << "'\n";
    return kExitUsage;
  }
  if (options.steps < 1) {
    llvm::errs() << "llmc verify: --steps expects at least 1, got "
                 << options.steps << "\n";
    return kExitUsage;
  }
  // One device (dp = cp = tp = ep = pp = 1) has nothing to compare. Errors
  // in the file are reported by the compile. A pipeline is compared with one
  // device running the same microbatches (gradient accumulation).
  llmc::ParseOutcome parsed = llmc::parseRunDescription(input);
  if (parsed.ok()) {
    const llmc::ParallelConfig &p = parsed.description->parallel;
    if (p.dp * p.cp * p.tp * p.ep * p.pp <= 1) {
      os << input << ": [parallel] asks for one device (dp = " << p.dp
         << ", cp = " << p.cp << ", tp = " << p.tp << ", ep = " << p.ep
         << ", pp = " << p.pp << "): nothing to verify\n";
      return kExitOk;
    }
  }
  return -1;
}

/// The mesh program and the single-device one, from one run description.
struct VerifyPrograms {
  Session session; ///< first: destroyed after the modules it owns
  Compiled meshCompiled, singleCompiled;
  rt::Executable meshExe, singleExe;
  /// --device cuda: both again as `llmc compile` makes them for the run
  /// (fused kernels where its devices say so): what `llmc launch` runs.
  Compiled meshGpuCompiled, singleGpuCompiled;
  rt::Executable meshGpuExe, singleGpuExe;
};

/// --device cuda: the two programs as the run compiles them.
int compileForGpu(const std::string &input, llvm::raw_ostream &os,
                  VerifyPrograms &programs) {
  CompileRequest request;
  request.input = input;
  request.stopAfter = "final";
  request.sourceOptions.warnPending = false;
  os << "compiling both again as the run compiles them, for the GPU\n";
  os.flush();
  if (int code = compileModule(programs.session, request,
                               programs.meshGpuCompiled))
    return code;
  if (int code = buildArtifact(programs.meshGpuCompiled, input,
                               programs.meshGpuExe))
    return code;
  request.singleDevice = true;
  if (int code = compileModule(programs.session, request,
                               programs.singleGpuCompiled))
    return code;
  return buildArtifact(programs.singleGpuCompiled, input,
                       programs.singleGpuExe);
}

/// Step 2: compiles both (on CPU virtual devices: every value stored).
int compileBoth(const std::string &input, llvm::raw_ostream &os,
                VerifyPrograms &programs) {
  Session &session = programs.session;
  CompileRequest request;
  request.input = input;
  request.stopAfter = "final";
  request.fusedKernels = false;
  os << "compiling the mesh program\n";
  os.flush();
  if (int code = compileModule(session, request, programs.meshCompiled))
    return code;
  if (int code = buildArtifact(programs.meshCompiled, input, programs.meshExe))
    return code;
  os << "compiling the single-device program\n";
  os.flush();
  request.singleDevice = true;
  request.sourceOptions.warnPending = false; // said once already
  if (int code = compileModule(session, request, programs.singleCompiled))
    return code;
  if (int code =
          buildArtifact(programs.singleCompiled, input, programs.singleExe))
    return code;
  if (programs.meshExe.findArgument("optimizer.step") < 0)
    return fail(input + ": no training step to verify (the model has no "
                        "parameters)");
  return kExitOk;
}

/// Step 3: --keep (emptied of an earlier verify's runs), or a temporary
/// directory.
int makeWorkDirectory(const std::string &keep, std::string &work) {
  work = keep;
  std::error_code ec;
  if (work.empty()) {
    llvm::SmallString<128> temp;
    ec = llvm::sys::fs::createUniqueDirectory("llmc-verify", temp);
    work = std::string(temp);
  } else {
    ec = llvm::sys::fs::create_directories(work);
    // Only what an earlier verify wrote there (checkpoints would mix).
    for (const char *sub : {"mesh", "single", "mesh-cuda", "single-cuda"})
      if (!ec)
        ec = llvm::sys::fs::remove_directories(joinPath(work, sub));
  }
  if (ec)
    return fail("cannot create the directory '" + work + "': " + ec.message());
  return kExitOk;
}

/// The tolerances: f32 roundoff in another order, or 16-bit rounding.
struct Tolerances {
  double scalar = 1e-5; ///< losses and grad norms, relative
  double tensor = 1e-4; ///< gradients and parameters, relative L2
};

Tolerances tolerancesFor(const Compiled &single, llvm::raw_ostream &os) {
  Tolerances t;
  if (!single.description ||
      single.description->precision.policy == llmc::PrecisionPolicy::Fp32)
    return t;
  t.scalar = t.tensor = 2e-2;
  os << "note: a "
     << (single.description->precision.policy == llmc::PrecisionPolicy::Bf16
             ? "bf16"
         : single.description->precision.policy == llmc::PrecisionPolicy::Fp8
             ? "fp8"
             : "fp16")
     << " run: every tolerance is 2e-2 (16-bit rounding)\n";
  return t;
}

/// Step 7: losses and gradient norms, step by step; the worst of each.
void compareSteps(const RunResult &meshRun, const RunResult &singleRun,
                  int64_t steps, llvm::raw_ostream &os, double &worstLoss,
                  double &worstNorm) {
  worstLoss = worstNorm = 0;
  os << "\n  step  loss (mesh)   loss (1 device)  rel. diff   grad norm rel. "
        "diff\n";
  for (int64_t i = 0; i < steps; ++i) {
    const rt::StepMetrics &a = meshRun.report.steps[i];
    const rt::StepMetrics &b = singleRun.report.steps[i];
    double loss = relativeDifference(a.loss, b.loss);
    double norm = relativeDifference(a.gradNorm, b.gradNorm);
    worstLoss = std::max(worstLoss, loss);
    worstNorm = std::max(worstNorm, norm);
    os << llvm::formatv("  {0,4}  {1,-12:f7}  {2,-15:f7}  {3,-10:e2}  {4:e2}\n",
                        b.step, a.loss, b.loss, loss, norm);
  }
}

/// The relative L2 difference of `tensor` in two checkpoint files (GPT-2's
/// key bias third left out); false after a message when it is missing or
/// unreadable.
bool compareTensor(const rt::SafetensorsFile &mesh,
                   const rt::SafetensorsFile &single, const std::string &tensor,
                   double &out) {
  const rt::SafetensorsTensor *a = mesh.find(tensor);
  const rt::SafetensorsTensor *b = single.find(tensor);
  std::vector<double> x, y;
  if (!a || !b || a->shape != b->shape || !toDoubles(*a, x) ||
      !toDoubles(*b, y)) {
    llvm::errs() << "llmc verify: tensor '" << tensor
                 << "' is missing, of another shape or not a float tensor "
                    "in one of the checkpoints\n";
    return false;
  }
  size_t skipBegin = 0, skipEnd = 0;
  if (isKeyBias(tensor) && y.size() % 3 == 0) {
    skipBegin = y.size() / 3;
    skipEnd = 2 * y.size() / 3;
  }
  out = relativeL2(x, y, skipBegin, skipEnd);
  return true;
}

/// Step 8: gradients (m1 after step 1) and parameters (after the last
/// step), per tensor, gathered per model part in the program's parameter
/// order.
int compareParts(const rt::Executable &singleExe, const RunResult &meshRun,
                 const RunResult &singleRun, int64_t steps,
                 std::vector<PartRow> &rows,
                 std::vector<std::string> &keyBiases) {
  rt::SafetensorsFile meshMoments, singleMoments, meshParams, singleParams;
  if (int code = readCheckpointFile(meshRun.checkpoints, 1,
                                    "optimizer.safetensors", meshMoments))
    return code;
  if (int code = readCheckpointFile(singleRun.checkpoints, 1,
                                    "optimizer.safetensors", singleMoments))
    return code;
  if (int code = readCheckpointFile(meshRun.checkpoints, steps,
                                    "model.safetensors", meshParams))
    return code;
  if (int code = readCheckpointFile(singleRun.checkpoints, steps,
                                    "model.safetensors", singleParams))
    return code;
  llvm::StringMap<size_t> rowOf;
  for (const rt::ArgumentInfo &arg : singleExe.arguments) {
    if (arg.role != rt::ArgumentRole::Parameter)
      continue;
    std::string part = modelPart(arg.name);
    auto [it, inserted] = rowOf.try_emplace(part, rows.size());
    if (inserted)
      rows.push_back(PartRow{part});
    PartRow &row = rows[it->second];
    ++row.tensors;
    if (isKeyBias(arg.name))
      keyBiases.push_back(arg.name);
    double gradient = 0, parameter = 0;
    if (!compareTensor(meshMoments, singleMoments, "optimizer.m." + arg.name,
                       gradient) ||
        !compareTensor(meshParams, singleParams, arg.name, parameter))
      return kExitRejected;
    // NaN compares false: std::max would drop it.
    if (!(gradient <= row.gradient)) {
      row.gradient = gradient;
      row.worstGradient = arg.name;
    }
    if (!(parameter <= row.parameter)) {
      row.parameter = parameter;
      row.worstParameter = arg.name;
    }
  }
  return kExitOk;
}

/// Step 9, first half: the table of model parts; the parts beyond the
/// tolerance are added to `failures`, the worst of each column returned.
void printPartTable(const std::vector<PartRow> &rows, double tolerance,
                    llvm::raw_ostream &os, std::vector<std::string> &failures,
                    double &worstGradient, double &worstParameter) {
  size_t width = std::string("part").size();
  for (const PartRow &row : rows)
    width = std::max(width, row.name.size());
  os << "\n  " << llvm::left_justify("part", width)
     << "  tensors  gradient (m1)  parameters\n";
  worstGradient = worstParameter = 0;
  for (const PartRow &row : rows) {
    bool gradientOk = row.gradient <= tolerance;
    bool parameterOk = row.parameter <= tolerance;
    os << "  " << llvm::left_justify(row.name, width)
       << llvm::formatv("  {0,7}  {1,13:e2}  {2,10:e2}", row.tensors,
                        row.gradient, row.parameter)
       << (gradientOk && parameterOk ? "" : "  FAIL") << "\n";
    if (!gradientOk || !parameterOk)
      failures.push_back(row.name);
    if (!(row.gradient <= worstGradient))
      worstGradient = row.gradient;
    if (!(row.parameter <= worstParameter))
      worstParameter = row.parameter;
  }
  os << "\n";
}

/// Everything one verify measured, for the summary.
struct VerifyOutcome {
  double worstLoss = 0, worstNorm = 0;
  std::vector<PartRow> rows;
  std::vector<std::string> keyBiases;
};

/// Step 9: the table, the summary lines, then PASS or FAIL.
int printVerdict(const VerifyCommand &options, const VerifyOutcome &outcome,
                 const Tolerances &tolerances, const std::string &mesh,
                 size_t ranks, const std::string &work, llvm::raw_ostream &os,
                 const std::string &where = "",
                 const std::string &reference = "one device") {
  std::vector<std::string> failures;
  double worstGradient = 0, worstParameter = 0;
  printPartTable(outcome.rows, tolerances.tensor, os, failures, worstGradient,
                 worstParameter);
  auto summary = [&](llvm::StringRef what, double worst, double tolerance,
                     llvm::StringRef how) {
    bool ok = worst <= tolerance;
    os << llvm::formatv("  {0,-11} {1:e2} {2} (tolerance {3:e0})  {4}\n", what,
                        worst, how, tolerance, ok ? "ok" : "FAIL");
    return ok;
  };
  std::vector<std::string> scalarFailures;
  if (!summary("losses", outcome.worstLoss, tolerances.scalar,
               "relative, worst step"))
    scalarFailures.push_back("losses");
  if (!summary("grad norms", outcome.worstNorm, tolerances.scalar,
               "relative, worst step"))
    scalarFailures.push_back("grad norms");
  failures.insert(failures.begin(), scalarFailures.begin(),
                  scalarFailures.end());
  summary("gradients", worstGradient, tolerances.tensor,
          "relative L2, worst tensor");
  summary("parameters", worstParameter, tolerances.tensor,
          "relative L2, worst tensor");
  int64_t steps = options.steps;
  os << "  gradients: AdamW's first moment after step 1, m1 = (1 - beta1) * "
        "clipped g1 (the same relative difference as the gradient's); "
        "parameters: after step "
     << steps << "\n";
  for (const PartRow &row : outcome.rows) {
    if (row.gradient <= tolerances.tensor && row.parameter <= tolerances.tensor)
      continue;
    os << "  " << row.name << ": worst";
    if (!(row.gradient <= tolerances.tensor))
      os << llvm::formatv(" gradient {0} ({1:e2})", row.worstGradient,
                          row.gradient);
    if (!(row.parameter <= tolerances.tensor))
      os << llvm::formatv(" parameter {0} ({1:e2})", row.worstParameter,
                          row.parameter);
    os << "\n";
  }
  if (!outcome.keyBiases.empty())
    os << "  note: the key third of " << outcome.keyBiases.size()
       << " attn.c_attn.bias tensor(s) is left out (its gradient is zero in "
          "exact arithmetic: AdamW moves it on rounding noise)\n";
  if (!options.keep.empty())
    os << "  kept the checkpoints and metrics of both runs in " << work
       << "\n";
  if (failures.empty()) {
    os << "PASS: mesh " << mesh << " (" << ranks << " ranks)" << where
       << " matches " << reference << " over " << steps << " step"
       << (steps == 1 ? "" : "s") << "\n";
    return kExitOk;
  }
  os << "FAIL: mesh " << mesh << where << " differs from " << reference
     << " beyond tolerance in: " << llvm::join(failures, ", ") << "\n";
  return kExitRejected;
}

/// --device: cpu or cuda, and a GPU for cuda. -1 to go on, else the exit
/// code.
int checkVerifyDevice(const VerifyCommand &options) {
  const std::string &device = options.device;
  if (device != "cpu" && device != "cuda") {
    llvm::errs() << "llmc verify: --device expects cpu or cuda, got '"
                 << device << "'\n";
    return kExitUsage;
  }
  if (device == "cpu")
    return -1;
#ifdef LLMC_HAVE_CUDA
  if (rt::cuda::cudaDeviceCount() > 0)
    return -1;
  return fail("--device cuda: no CUDA device on this machine "
              "(cudaGetDeviceCount found none); verify on the CPU without "
              "--device");
#else
  return fail("--device cuda: this build has no CUDA backend (configure "
              "with the CUDA toolkit, LLMC_CUDA=ON); verify on the CPU "
              "without --device");
#endif
}

#ifdef LLMC_HAVE_CUDA
/// --device cuda, steps 5 to 9: the mesh on virtual ranks of GPU 0, one
/// GPU, and the mesh on CPU devices, from the same initial parameters;
/// the virtual ranks against each of the other two, a table and a verdict
/// each. Exit 0 when both pass.
int verifyOnGpu(const VerifyCommand &options, const VerifyPrograms &programs,
                const std::string &work, const std::string &initial,
                const std::string &meshInitial, llvm::raw_ostream &os) {
  const rt::Executable &meshExe = programs.meshGpuExe;
  size_t ranks = meshExe.ranks.size();
  std::string mesh = rt::formatMesh(meshExe.mesh);
  int64_t steps = options.steps;
  std::string stepsText =
      std::to_string(steps) + (steps == 1 ? " step" : " steps");
  RunDevice virtualRanks{rt::cuda::createVirtualRankDeviceSession,
                         rt::cuda::cudaDeviceCount};
  RunDevice oneGpu{rt::cuda::createCudaDeviceSession,
                   rt::cuda::cudaDeviceCount};
  RunResult virtualRun, gpuRun, cpuRun;
  os << "training " << stepsText << " on " << ranks
     << " virtual ranks of cuda:0 (mesh " << mesh << ")\n";
  os.flush();
  if (int code = trainRun(meshExe, joinPath(work, "mesh-cuda"), meshInitial,
                          steps, options.threads, virtualRun, virtualRanks))
    return code;
  os << "training " << stepsText << " on 1 GPU\n";
  os.flush();
  if (int code = trainRun(programs.singleGpuExe, joinPath(work, "single-cuda"),
                          initial, steps, options.threads, gpuRun, oneGpu))
    return code;
  os << "training " << stepsText << " on " << ranks << " CPU devices (mesh "
     << mesh << ")\n";
  os.flush();
  if (int code = trainRun(programs.meshExe, joinPath(work, "mesh"), initial,
                          steps, options.threads, cpuRun))
    return code;
  Tolerances tolerances = tolerancesFor(programs.singleGpuCompiled, os);
  int exit = kExitOk;
  for (auto [reference, run] :
       {std::make_pair(std::string("one GPU"), &gpuRun),
        std::make_pair(std::string("the mesh on CPU devices"), &cpuRun)}) {
    os << "\nvirtual GPU ranks against " << reference << ":\n";
    VerifyOutcome outcome;
    compareSteps(virtualRun, *run, steps, os, outcome.worstLoss,
                 outcome.worstNorm);
    if (int code = compareParts(programs.singleExe, virtualRun, *run, steps,
                                outcome.rows, outcome.keyBiases))
      return code;
    if (printVerdict(options, outcome, tolerances, mesh, ranks, work, os,
                     " on virtual GPU ranks", reference) != kExitOk)
      exit = kExitRejected;
  }
  return exit;
}
#endif

} // namespace

int runVerify(const VerifyCommand &options) {
  llvm::raw_ostream &os = llvm::outs();
  const std::string &input = options.input;
  // 1. A mesh of more than one device; 2. both programs.
  if (int code = checkVerifyInput(options, os); code >= 0)
    return code;
  if (int code = checkVerifyDevice(options); code >= 0)
    return code;
  VerifyPrograms programs;
  if (int code = compileBoth(input, os, programs))
    return code;
  if (options.device == "cuda")
    if (int code = compileForGpu(input, os, programs))
      return code;
  const rt::Executable &meshExe = programs.meshExe, &singleExe = programs.singleExe;
  size_t ranks = meshExe.ranks.size();
  std::string mesh = rt::formatMesh(meshExe.mesh);
  if (ranks <= 1) {
    os << input << ": the program runs on one device: nothing to verify\n";
    return kExitOk;
  }

  // 3. A working directory: --keep, or a temporary one removed at the end.
  std::string work;
  if (int code = makeWorkDirectory(options.keep, work))
    return code;
  struct Remover {
    std::string path;
    ~Remover() {
      if (!path.empty())
        (void)llvm::sys::fs::remove_directories(path);
    }
  } remover{options.keep.empty() ? work : std::string()};

  // 4. The same initial parameters for both: drawn once, bound by both.
  rt::TrainSettings settings;
  if (rt::Status s = rt::readTrainSettings(singleExe.metadata, settings); !s)
    return fail(s.message());
  std::string initial = joinPath(work, "initial.safetensors");
  std::string meshInitial = initial;
  if (!options.perturbPart.empty())
    meshInitial = joinPath(work, "initial-perturbed.safetensors");
  if (int code = writeInitialParameters(singleExe, settings.seed, initial,
                                        options.perturbPart, meshInitial))
    return code;
  if (!options.perturbPart.empty())
    os << "perturbing the mesh run's initial " << options.perturbPart
       << " (--perturb-part)\n";

  // 5. Train both (--device cuda: three runs, two comparisons).
#ifdef LLMC_HAVE_CUDA
  if (options.device == "cuda")
    return verifyOnGpu(options, programs, work, initial, meshInitial, os);
#endif
  int64_t steps = options.steps;
  RunResult meshRun, singleRun;
  os << "training " << steps << " step" << (steps == 1 ? "" : "s") << " on "
     << ranks << " CPU devices (mesh " << mesh << ")\n";
  os.flush();
  if (int code = trainRun(meshExe, joinPath(work, "mesh"), meshInitial, steps,
                          options.threads, meshRun))
    return code;
  os << "training " << steps << " step" << (steps == 1 ? "" : "s")
     << " on 1 CPU device\n";
  os.flush();
  if (int code = trainRun(singleExe, joinPath(work, "single"), initial, steps,
                          options.threads, singleRun))
    return code;

  // 6. Tolerances; 7. losses and grad norms; 8. gradients and parameters
  //    per model part; 9. the verdict.
  Tolerances tolerances = tolerancesFor(programs.singleCompiled, os);
  VerifyOutcome outcome;
  compareSteps(meshRun, singleRun, steps, os, outcome.worstLoss,
               outcome.worstNorm);
  if (int code = compareParts(singleExe, meshRun, singleRun, steps,
                              outcome.rows, outcome.keyBiases))
    return code;
  return printVerdict(options, outcome, tolerances, mesh, ranks, work, os);
}

} // namespace llmc::driver
