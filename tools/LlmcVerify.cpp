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
#include "tools/llmc-run/Verify.h"

#include "runtime/Sharding.h"
#include "runtime/train/Trainer.h"

#ifdef LLMC_HAVE_CUDA
#include "runtime/cuda/session/CudaSession.h"
#endif

#include "llvm/Support/FileSystem.h"

#include <iostream>
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

using verify::Tolerances;
using verify::VerifyExecutables;
using verify::VerifyRunOptions;

int fail(const std::string &message) { return verify::verifyFail(message); }

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

/// Step 6: the tolerances, from the single-device run's precision: f32
/// roundoff in another order, or 16-bit rounding.
Tolerances tolerancesFor(const Compiled &single) {
  Tolerances t;
  if (!single.description ||
      single.description->precision.policy == llmc::PrecisionPolicy::Fp32)
    return t;
  t.scalar = t.tensor = 2e-2;
  llmc::PrecisionPolicy policy = single.description->precision.policy;
  t.note = std::string("note: a ") +
           (policy == llmc::PrecisionPolicy::Bf16  ? "bf16"
            : policy == llmc::PrecisionPolicy::Fp8 ? "fp8"
                                                   : "fp16") +
           " run: every tolerance is 2e-2 (16-bit rounding)";
  return t;
}

/// --device: cpu or cuda, and for cuda a GPU, or --prepare (the GPU is
/// another machine's). -1 to go on, else the exit code.
int checkVerifyDevice(const VerifyCommand &options) {
  const std::string &device = options.device;
  if (device != "cpu" && device != "cuda") {
    llvm::errs() << "llmc verify: --device expects cpu or cuda, got '"
                 << device << "'\n";
    return kExitUsage;
  }
  if (!options.prepare.empty() && device != "cuda") {
    llvm::errs() << "llmc verify: --prepare writes the programs of "
                    "--device cuda for a GPU machine; add --device cuda\n";
    return kExitUsage;
  }
  if (!options.prepare.empty() && !options.keep.empty()) {
    llvm::errs() << "llmc verify: --prepare DIR keeps everything in DIR; "
                    "leave out --keep\n";
    return kExitUsage;
  }
  if (device == "cpu" || !options.prepare.empty())
    return -1;
#ifdef LLMC_HAVE_CUDA
  if (rt::cuda::cudaDeviceCount() > 0)
    return -1;
  return fail("--device cuda: no CUDA device on this machine "
              "(cudaGetDeviceCount found none); verify on the CPU without "
              "--device, or write the programs for a GPU machine with "
              "--prepare DIR and run `llmc-run verify DIR` there");
#else
  return fail("--device cuda: this build has no CUDA backend (configure "
              "with the CUDA toolkit, LLMC_CUDA=ON); verify on the CPU "
              "without --device");
#endif
}

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
  if (meshExe.ranks.size() <= 1) {
    os << input << ": the program runs on one device: nothing to verify\n";
    return kExitOk;
  }

  // 3. A working directory: --prepare, --keep, or a temporary one removed
  //    at the end.
  const std::string &kept =
      options.prepare.empty() ? options.keep : options.prepare;
  std::string work;
  if (int code = makeWorkDirectory(kept, work))
    return code;
  struct Remover {
    std::string path;
    ~Remover() {
      if (!path.empty())
        (void)llvm::sys::fs::remove_directories(path);
    }
  } remover{kept.empty() ? work : std::string()};

  // 4. The same initial parameters for both: drawn once, bound by both.
  rt::TrainSettings settings;
  if (rt::Status s = rt::readTrainSettings(singleExe.metadata, settings); !s)
    return fail(s.message());
  std::string initial = joinPath(work, "initial.safetensors");
  if (int code = verify::writeInitialParameters(
          singleExe, settings.seed, initial, options.perturbPart,
          joinPath(work, "initial-perturbed.safetensors")))
    return code;
  if (!options.perturbPart.empty())
    os << "perturbing the mesh run's initial " << options.perturbPart
       << " (--perturb-part)\n";

  // 5 to 9 (runtime only, tools/llmc-run/Verify.h): train, compare, judge;
  // or, with --prepare, write what they need for `llmc-run verify`.
  VerifyRunOptions run;
  run.steps = options.steps;
  run.threads = options.threads;
  run.keep = options.keep;
  run.perturbPart = options.perturbPart;
  run.device = options.device;
  VerifyExecutables executables{&meshExe, &singleExe};
  if (options.device == "cuda")
    executables.meshGpu = &programs.meshGpuExe,
    executables.singleGpu = &programs.singleGpuExe;
  Tolerances tolerances = tolerancesFor(
      options.device == "cuda" ? programs.singleGpuCompiled
                               : programs.singleCompiled);
  if (!options.prepare.empty()) {
    if (int code = verify::writePreparedVerify(work, run, executables,
                                               tolerances))
      return code;
    os << "wrote the programs, the initial parameters and verify.json to "
       << work << ": copy it to the GPU machine and run `llmc-run verify "
       << work << "` there (llmc-run needs no compiler)\n";
    return kExitOk;
  }
  os.flush(); // the rest is printed through std::cout
  int code = verify::verifyPrograms(run, executables, tolerances, work,
                                    std::cout);
  std::cout.flush();
  return code;
}

} // namespace llmc::driver
