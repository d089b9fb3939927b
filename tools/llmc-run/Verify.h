//===- Verify.h - llmc verify's runs and comparisons, runtime only -*- C++ -*-===//
//
// The half of `llmc verify` (docs/verify.md) that needs no compiler: from the
// compiled programs (the mesh and the single-device one, and for --device
// cuda both again as the run compiles them), train a few AdamW steps of each
// from the same initial parameters, compare losses, gradient norms,
// gradients (AdamW's first moment after step 1) and parameters per model
// part, and print the tables and the verdict.
//
// `llmc verify` (tools/LlmcVerify.cpp) compiles and calls it in one process.
// On a GPU machine without the compiler, `llmc verify RUN.toml --device cuda
// --prepare DIR` writes the programs and the initial parameters into DIR
// (writePreparedVerify) on the build machine, and `llmc-run verify DIR`
// runs them there (runPreparedVerify): the same tables, the same exit codes.
// Only the standard library and the runtime: llmc-run never needs MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_TOOLS_LLMC_RUN_VERIFY_H
#define LLMC_TOOLS_LLMC_RUN_VERIFY_H

#include "runtime/Executable.h"

#include <cstdint>
#include <ostream>
#include <string>

namespace llmc::verify {

/// llmc's exit codes (tools/LlmcDriver.h): PASS, FAIL (or an error), usage.
constexpr int kVerifyOk = 0;
constexpr int kVerifyRejected = 1;
constexpr int kVerifyUsage = 2;

struct VerifyRunOptions {
  int64_t steps = 3;
  unsigned threads = 0;
  /// --keep: the directory to keep (said in the summary); empty when the
  /// work directory is temporary.
  std::string keep;
  std::string perturbPart; ///< the FAIL-path tests' perturbed model part
  std::string device = "cpu"; ///< cpu or cuda
};

/// The tolerances: f32 roundoff in another order, or 16-bit rounding.
struct Tolerances {
  double scalar = 1e-5; ///< losses and grad norms, relative
  double tensor = 1e-4; ///< gradients and parameters, relative L2
  /// Printed before the tables when not empty ("a bf16 run: ...").
  std::string note;
};

/// The programs of one verify. The GPU ones only for device cuda.
struct VerifyExecutables {
  const rt::Executable *mesh = nullptr;   ///< CPU devices, values stored
  const rt::Executable *single = nullptr; ///< one CPU device
  const rt::Executable *meshGpu = nullptr;   ///< as `llmc launch` runs it
  const rt::Executable *singleGpu = nullptr; ///< as one GPU runs the run
};

/// Prints "llmc verify: MESSAGE" on stderr; returns kVerifyRejected.
int verifyFail(const std::string &message);

/// The model part of a parameter or moment name (transformer.h.0.attn).
std::string modelPart(const std::string &name);

/// Writes the parameters of `exe` drawn with `seed` to `path`; those of
/// `perturbPart` (when not empty) moved by 1% into `perturbedPath` too.
int writeInitialParameters(const rt::Executable &exe, uint64_t seed,
                           const std::string &path,
                           const std::string &perturbPart,
                           const std::string &perturbedPath);

/// Steps 5 to 9 in `work` (initial.safetensors, and
/// initial-perturbed.safetensors with a perturbed part, already there):
/// on CPU devices the mesh against one device; with device cuda the mesh on
/// virtual GPU ranks against one GPU and against the mesh on CPU devices.
/// Exit code.
int verifyPrograms(const VerifyRunOptions &options,
                   const VerifyExecutables &programs,
                   const Tolerances &tolerances, const std::string &work,
                   std::ostream &os);

/// --prepare DIR: the four programs (mesh.llmcx, single.llmcx,
/// mesh-cuda.llmcx, single-cuda.llmcx), verify.json (steps, tolerances, the
/// perturbed part) beside the initial parameters already written to DIR.
int writePreparedVerify(const std::string &dir,
                        const VerifyRunOptions &options,
                        const VerifyExecutables &programs,
                        const Tolerances &tolerances);

/// llmc-run verify DIR: reads what writePreparedVerify wrote and runs
/// verifyPrograms in DIR (its runs kept there). `threads` overrides the
/// prepared count when not 0. Exit code.
int runPreparedVerify(const std::string &dir, unsigned threads,
                      std::ostream &os);

} // namespace llmc::verify

#endif // LLMC_TOOLS_LLMC_RUN_VERIFY_H
