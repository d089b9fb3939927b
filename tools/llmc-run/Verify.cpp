//===- Verify.cpp - llmc verify's runs and comparisons, runtime only ------===//
//
// See Verify.h and docs/verify.md. The numbered steps are those of
// `llmc verify` (tools/LlmcVerify.cpp: 1-4 check, compile and draw; here
// 5 train, 6 tolerances, 7 losses and grad norms, 8 gradients and
// parameters per model part, 9 the verdict).
//
//===----------------------------------------------------------------------===//
#include "tools/llmc-run/Verify.h"

#include "runtime/DeviceSession.h"
#include "runtime/Sharding.h"
#include "runtime/io/Safetensors.h"
#include "runtime/train/Checkpoint.h"
#include "runtime/train/Init.h"
#include "runtime/train/Trainer.h"

#ifdef LLMC_HAVE_CUDA
#include "runtime/cuda/session/CudaSession.h"
#include "runtime/cuda/session/VirtualRanks.h"
#endif

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <vector>

namespace llmc::verify {

namespace {

namespace fs = std::filesystem;

std::string joinPath(const std::string &a, const std::string &b,
                     const std::string &c = "") {
  fs::path path = fs::path(a) / b;
  if (!c.empty())
    path /= c;
  return path.string();
}

/// printf into a std::string.
template <typename... Args>
std::string format(const char *pattern, Args... args) {
  char line[512];
  std::snprintf(line, sizeof(line), pattern, args...);
  return line;
}

/// GPT-2's fused q/k/v bias: its key third has a zero gradient in exact
/// arithmetic (softmax ignores a constant added to every key), so AdamW moves
/// it by +-lr on rounding noise of either sign. It is left out.
bool isKeyBias(const std::string &name) {
  const std::string suffix = "attn.c_attn.bias";
  return name.size() >= suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
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

/// Where a run trains: CPU virtual devices (no factory), or the GPU through
/// `factory` (one GPU, or virtual ranks).
struct RunDevice {
  rt::DeviceSessionFactory factory = nullptr;
  rt::DeviceCountFn count = nullptr;
};

/// Step 5: trains `steps` steps of `exe` on `device`, saving a checkpoint
/// after every step under `dir`/checkpoints.
int trainRun(const rt::Executable &exe, const std::string &dir,
             const std::string &weights, int64_t steps, unsigned threads,
             RunResult &result, const RunDevice &device = RunDevice()) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return verifyFail("cannot create the directory '" + dir +
                      "': " + ec.message());
  rt::TrainOptions train;
  if (rt::Status s = rt::readTrainSettings(exe.metadata, train.settings); !s)
    return verifyFail(s.message());
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
    return verifyFail(s.message());
  return kVerifyOk;
}

/// Reads `file` of the checkpoint of `step` under `root`.
int readCheckpointFile(const std::string &root, int64_t step,
                       const char *file, rt::SafetensorsFile &out) {
  std::string path = joinPath(root, rt::checkpointName(step), file);
  if (rt::Status s = rt::readSafetensors(path, out); !s)
    return verifyFail(s.message());
  return kVerifyOk;
}

/// Step 7: losses and gradient norms, step by step; the worst of each.
void compareSteps(const RunResult &meshRun, const RunResult &singleRun,
                  int64_t steps, std::ostream &os, double &worstLoss,
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
    os << format("  %4lld  %-12.7f  %-15.7f  %-10.2e  %.2e\n",
                 static_cast<long long>(b.step), a.loss, b.loss, loss, norm);
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
    std::cerr << "llmc verify: tensor '" << tensor
              << "' is missing, of another shape or not a float tensor in "
                 "one of the checkpoints\n";
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
  std::map<std::string, size_t> rowOf;
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
      return kVerifyRejected;
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
  return kVerifyOk;
}

/// Step 9, first half: the table of model parts; the parts beyond the
/// tolerance are added to `failures`, the worst of each column returned.
void printPartTable(const std::vector<PartRow> &rows, double tolerance,
                    std::ostream &os, std::vector<std::string> &failures,
                    double &worstGradient, double &worstParameter) {
  int width = static_cast<int>(std::string("part").size());
  for (const PartRow &row : rows)
    width = std::max(width, static_cast<int>(row.name.size()));
  os << "\n  " << format("%-*s", width, "part")
     << "  tensors  gradient (m1)  parameters\n";
  worstGradient = worstParameter = 0;
  for (const PartRow &row : rows) {
    bool gradientOk = row.gradient <= tolerance;
    bool parameterOk = row.parameter <= tolerance;
    os << "  " << format("%-*s", width, row.name.c_str())
       << format("  %7d  %13.2e  %10.2e", row.tensors, row.gradient,
                 row.parameter)
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

/// Everything one comparison measured, for the summary.
struct VerifyOutcome {
  double worstLoss = 0, worstNorm = 0;
  std::vector<PartRow> rows;
  std::vector<std::string> keyBiases;
};

std::string joinNames(const std::vector<std::string> &names) {
  std::string joined;
  for (const std::string &name : names)
    joined += (joined.empty() ? "" : ", ") + name;
  return joined;
}

/// Step 9, second half: the worst of each kind against its tolerance; the
/// failing ones added to `failures` (the scalars first).
void printSummary(const VerifyOutcome &outcome, const Tolerances &tolerances,
                  double worstGradient, double worstParameter,
                  std::ostream &os, std::vector<std::string> &failures) {
  auto summary = [&](const char *what, double worst, double tolerance,
                     const char *how) {
    bool ok = worst <= tolerance;
    os << format("  %-11s %.2e %s (tolerance %.0e)  %s\n", what, worst, how,
                 tolerance, ok ? "ok" : "FAIL");
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
}

/// Step 9: the table, the summary lines, then PASS or FAIL.
int printVerdict(const VerifyRunOptions &options, const VerifyOutcome &outcome,
                 const Tolerances &tolerances, const std::string &mesh,
                 size_t ranks, const std::string &work, std::ostream &os,
                 const std::string &where = "",
                 const std::string &reference = "one device") {
  std::vector<std::string> failures;
  double worstGradient = 0, worstParameter = 0;
  printPartTable(outcome.rows, tolerances.tensor, os, failures, worstGradient,
                 worstParameter);
  printSummary(outcome, tolerances, worstGradient, worstParameter, os,
               failures);
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
      os << " gradient " << row.worstGradient
         << format(" (%.2e)", row.gradient);
    if (!(row.parameter <= tolerances.tensor))
      os << " parameter " << row.worstParameter
         << format(" (%.2e)", row.parameter);
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
    return kVerifyOk;
  }
  os << "FAIL: mesh " << mesh << where << " differs from " << reference
     << " beyond tolerance in: " << joinNames(failures) << "\n";
  return kVerifyRejected;
}

std::string stepsText(int64_t steps) {
  return std::to_string(steps) + (steps == 1 ? " step" : " steps");
}

/// Steps 5 to 9 on CPU devices: the mesh against one device.
int verifyOnCpu(const VerifyRunOptions &options,
                const VerifyExecutables &programs, const Tolerances &tolerances,
                const std::string &work, const std::string &initial,
                const std::string &meshInitial, std::ostream &os) {
  const rt::Executable &meshExe = *programs.mesh;
  size_t ranks = meshExe.ranks.size();
  std::string mesh = rt::formatMesh(meshExe.mesh);
  RunResult meshRun, singleRun;
  os << "training " << stepsText(options.steps) << " on " << ranks
     << " CPU devices (mesh " << mesh << ")\n"
     << std::flush;
  if (int code = trainRun(meshExe, joinPath(work, "mesh"), meshInitial,
                          options.steps, options.threads, meshRun))
    return code;
  os << "training " << stepsText(options.steps) << " on 1 CPU device\n"
     << std::flush;
  if (int code = trainRun(*programs.single, joinPath(work, "single"), initial,
                          options.steps, options.threads, singleRun))
    return code;
  if (!tolerances.note.empty())
    os << tolerances.note << "\n";
  VerifyOutcome outcome;
  compareSteps(meshRun, singleRun, options.steps, os, outcome.worstLoss,
               outcome.worstNorm);
  if (int code = compareParts(*programs.single, meshRun, singleRun,
                              options.steps, outcome.rows, outcome.keyBiases))
    return code;
  return printVerdict(options, outcome, tolerances, mesh, ranks, work, os);
}

#ifdef LLMC_HAVE_CUDA
/// Steps 5 to 9 with device cuda: the mesh on virtual ranks of GPU 0, one
/// GPU, and the mesh on CPU devices, from the same initial parameters; the
/// virtual ranks against each of the other two, a table and a verdict each.
/// Exit 0 when both pass.
int verifyOnGpu(const VerifyRunOptions &options,
                const VerifyExecutables &programs, const Tolerances &tolerances,
                const std::string &work, const std::string &initial,
                const std::string &meshInitial, std::ostream &os) {
  const rt::Executable &meshExe = *programs.meshGpu;
  size_t ranks = meshExe.ranks.size();
  std::string mesh = rt::formatMesh(meshExe.mesh);
  int64_t steps = options.steps;
  RunDevice virtualRanks{rt::cuda::createVirtualRankDeviceSession,
                         rt::cuda::cudaDeviceCount};
  RunDevice oneGpu{rt::cuda::createCudaDeviceSession,
                   rt::cuda::cudaDeviceCount};
  RunResult virtualRun, gpuRun, cpuRun;
  os << "training " << stepsText(steps) << " on " << ranks
     << " virtual ranks of cuda:0 (mesh " << mesh << ")\n"
     << std::flush;
  if (int code = trainRun(meshExe, joinPath(work, "mesh-cuda"), meshInitial,
                          steps, options.threads, virtualRun, virtualRanks))
    return code;
  os << "training " << stepsText(steps) << " on 1 GPU\n" << std::flush;
  if (int code = trainRun(*programs.singleGpu, joinPath(work, "single-cuda"),
                          initial, steps, options.threads, gpuRun, oneGpu))
    return code;
  os << "training " << stepsText(steps) << " on " << ranks
     << " CPU devices (mesh " << mesh << ")\n"
     << std::flush;
  if (int code = trainRun(*programs.mesh, joinPath(work, "mesh"), initial,
                          steps, options.threads, cpuRun))
    return code;
  if (!tolerances.note.empty())
    os << tolerances.note << "\n";
  int exit = kVerifyOk;
  for (auto [reference, run] :
       {std::make_pair(std::string("one GPU"), &gpuRun),
        std::make_pair(std::string("the mesh on CPU devices"), &cpuRun)}) {
    os << "\nvirtual GPU ranks against " << reference << ":\n";
    VerifyOutcome outcome;
    compareSteps(virtualRun, *run, steps, os, outcome.worstLoss,
                 outcome.worstNorm);
    if (int code = compareParts(*programs.single, virtualRun, *run, steps,
                                outcome.rows, outcome.keyBiases))
      return code;
    if (printVerdict(options, outcome, tolerances, mesh, ranks, work, os,
                     " on virtual GPU ranks", reference) != kVerifyOk)
      exit = kVerifyRejected;
  }
  return exit;
}
#endif

} // namespace

int verifyFail(const std::string &message) {
  std::cerr << "llmc verify: " << message << "\n";
  return kVerifyRejected;
}

std::string modelPart(const std::string &full) {
  std::string name = full;
  for (const char *suffix : {".weight", ".bias"}) {
    size_t n = std::strlen(suffix);
    if (name.size() > n && name.compare(name.size() - n, n, suffix) == 0) {
      name.resize(name.size() - n);
      break;
    }
  }
  // Inside a layer (GPT-2's h.N, LLaMA's layers.N): up to the block after it.
  std::vector<std::string> parts;
  for (size_t begin = 0;;) {
    size_t dot = name.find('.', begin);
    parts.push_back(name.substr(begin, dot - begin));
    if (dot == std::string::npos)
      break;
    begin = dot + 1;
  }
  for (size_t i = 0; i + 2 < parts.size(); ++i) {
    const std::string &index = parts[i + 1];
    bool number = !index.empty() &&
                  std::all_of(index.begin(), index.end(),
                              [](char c) { return c >= '0' && c <= '9'; });
    if ((parts[i] == "h" || parts[i] == "layers") && number) {
      std::string joined = parts[0];
      for (size_t j = 1; j < i + 3; ++j)
        joined += "." + parts[j];
      return joined;
    }
  }
  return name;
}

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
      return verifyFail(s.message());
    if (rt::Status s = rt::initialArgumentBytes(exe, i, seed, storage.back());
        !s)
      return verifyFail(s.message());
    t.data = storage.back().data();
    t.bytes = storage.back().size();
    tensors[arg.name] = t;
  }
  if (rt::Status s = rt::writeSafetensors(path, tensors); !s)
    return verifyFail(s.message());
  if (perturbPart.empty())
    return kVerifyOk;
  std::vector<std::vector<uint8_t>> perturbed;
  perturbed.reserve(tensors.size());
  for (auto &[name, t] : tensors) {
    if (modelPart(name) != perturbPart)
      continue;
    if (t.dtype != rt::DType::F32)
      return verifyFail("--perturb-part expects f32 parameters, got " +
                        std::string(rt::dtypeName(t.dtype)) + " for " + name);
    perturbed.emplace_back(t.data, t.data + t.bytes);
    float *values = reinterpret_cast<float *>(perturbed.back().data());
    for (size_t j = 0; j < t.bytes / 4; ++j)
      values[j] = 1.01f * values[j] + 1e-3f;
    t.data = perturbed.back().data();
  }
  if (perturbed.empty())
    return verifyFail("--perturb-part: no parameter of model part '" +
                      perturbPart + "'");
  if (rt::Status s = rt::writeSafetensors(perturbedPath, tensors); !s)
    return verifyFail(s.message());
  return kVerifyOk;
}

int verifyPrograms(const VerifyRunOptions &options,
                   const VerifyExecutables &programs,
                   const Tolerances &tolerances, const std::string &work,
                   std::ostream &os) {
  std::string initial = joinPath(work, "initial.safetensors");
  std::string meshInitial =
      options.perturbPart.empty()
          ? initial
          : joinPath(work, "initial-perturbed.safetensors");
  if (options.device != "cuda")
    return verifyOnCpu(options, programs, tolerances, work, initial,
                       meshInitial, os);
#ifdef LLMC_HAVE_CUDA
  if (!programs.meshGpu || !programs.singleGpu)
    return verifyFail("--device cuda: the GPU programs are missing");
  if (rt::cuda::cudaDeviceCount() <= 0)
    return verifyFail("--device cuda: no CUDA device on this machine "
                      "(cudaGetDeviceCount found none); verify on the CPU "
                      "without --device");
  return verifyOnGpu(options, programs, tolerances, work, initial,
                     meshInitial, os);
#else
  return verifyFail("--device cuda: this build has no CUDA backend "
                    "(configure with the CUDA toolkit, LLMC_CUDA=ON); verify "
                    "on the CPU without --device");
#endif
}

namespace {

const char *const kProgramFiles[] = {"mesh.llmcx", "single.llmcx",
                                     "mesh-cuda.llmcx", "single-cuda.llmcx"};

} // namespace

int writePreparedVerify(const std::string &dir,
                        const VerifyRunOptions &options,
                        const VerifyExecutables &programs,
                        const Tolerances &tolerances) {
  const rt::Executable *all[] = {programs.mesh, programs.single,
                                 programs.meshGpu, programs.singleGpu};
  for (size_t i = 0; i < 4; ++i) {
    if (!all[i])
      return verifyFail("--prepare: program " + std::string(kProgramFiles[i]) +
                        " was not compiled");
    if (rt::Status s = rt::writeExecutable(*all[i], joinPath(dir, kProgramFiles[i]));
        !s)
      return verifyFail(s.message());
  }
  nlohmann::json settings = {
      {"steps", options.steps},          {"threads", options.threads},
      {"device", options.device},        {"perturb_part", options.perturbPart},
      {"tolerance_scalar", tolerances.scalar},
      {"tolerance_tensor", tolerances.tensor},
      {"tolerance_note", tolerances.note}};
  std::ofstream out(joinPath(dir, "verify.json"));
  out << settings.dump(2) << "\n";
  if (!out)
    return verifyFail("cannot write " + joinPath(dir, "verify.json"));
  return kVerifyOk;
}

int runPreparedVerify(const std::string &dir, unsigned threads,
                      std::ostream &os) {
  std::string path = joinPath(dir, "verify.json");
  std::ifstream in(path);
  if (!in)
    return verifyFail("cannot read " + path +
                      ": is this a directory of `llmc verify RUN.toml --device "
                      "cuda --prepare DIR`?");
  nlohmann::json settings = nlohmann::json::parse(in, nullptr, false);
  VerifyRunOptions options;
  Tolerances tolerances;
  if (settings.is_discarded() || !settings.is_object())
    return verifyFail(path + ": not a JSON object");
  try {
    options.steps = settings.at("steps").get<int64_t>();
    options.threads = threads ? threads : settings.at("threads").get<unsigned>();
    options.device = settings.at("device").get<std::string>();
    options.perturbPart = settings.at("perturb_part").get<std::string>();
    tolerances.scalar = settings.at("tolerance_scalar").get<double>();
    tolerances.tensor = settings.at("tolerance_tensor").get<double>();
    tolerances.note = settings.at("tolerance_note").get<std::string>();
  } catch (const nlohmann::json::exception &e) {
    return verifyFail(path + ": " + e.what());
  }
  options.keep = dir;
  rt::Executable exes[4];
  for (size_t i = 0; i < 4; ++i)
    if (rt::Status s = rt::readExecutable(joinPath(dir, kProgramFiles[i]), exes[i]);
        !s)
      return verifyFail(s.message());
  // Only what an earlier run wrote (checkpoints would mix).
  for (const char *sub : {"mesh", "single", "mesh-cuda", "single-cuda"}) {
    std::error_code ec;
    fs::remove_all(joinPath(dir, sub), ec);
  }
  VerifyExecutables programs{&exes[0], &exes[1], &exes[2], &exes[3]};
  return verifyPrograms(options, programs, tolerances, dir, os);
}

} // namespace llmc::verify
