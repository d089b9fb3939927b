//===- EnvironmentHelp.h - the LLMC_* variables, as --help lists them -----===//
//
// The environment variables llmc and the runtime read, one line each, for
// `llmc --help` and `llmc-run --help`. docs/environment.md is the full
// table; the ctest environment-table (test/layout/check_environment.py)
// fails when this list, that table and the variables the code reads differ.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_TOOLS_ENVIRONMENTHELP_H
#define LLMC_TOOLS_ENVIRONMENTHELP_H

namespace llmc {

/// The ENVIRONMENT section of the help: a heading and one line a variable.
inline constexpr const char *kEnvironmentHelp =
    "ENVIRONMENT (docs/environment.md):\n"
    "  LLMC_PROFILE=1|shapes        kernel times by kind on stderr at the "
    "end\n"
    "                               (CUDA: also start-up; shapes: operand "
    "shapes)\n"
    "  LLMC_TRACE=FILE.json         as --trace: a Perfetto trace of chosen "
    "steps\n"
    "  LLMC_TRACE_STEPS=A:B         as --trace-steps: the steps traced (3:4)\n"
    "  LLMC_CHECK_CPU=1             check every CUDA launch against the CPU "
    "kernel\n"
    "  LLMC_CUDA_GRAPH=0            enqueue the step command by command, no "
    "CUDA graph\n"
    "  LLMC_MULTI_TENSOR=0          no multi-tensor launches (optimizer, "
    "norms, casts)\n"
    "  LLMC_FOLD_ADDS=0             no residual add folded into the norm "
    "gradient\n"
    "  LLMC_CUDNN=0                 llmc's flash attention even where cuDNN "
    "is installed\n"
    "  LLMC_CUDNN_DETERMINISTIC=0   cuDNN's faster atomic (non-deterministic) "
    "backward\n"
    "  LLMC_RING_TENSOR_CORES=1     ring attention's bf16 blocks on tensor "
    "cores (opt-in)\n"
    "  LLMC_KERNEL_CACHE=DIR        compiled CUDA kernels "
    "(~/.cache/llmc/kernels)\n"
    "  LLMC_COLLECTIVE_TIMEOUT_S=N  collective deadline in seconds (CPU 60, "
    "NCCL 600)\n"
    "  LLMC_TEST_STALL_RANK=R       test hook: rank R stalls at its first "
    "collective\n"
    "  LLMC_PLAN_COLLECTIVES=ring   the cost model prices every collective "
    "as a ring\n"
    "  LLMC_PLAN_OVERLAP=none       the cost model overlaps no communication\n"
    "  LLMC_SEARCH_TRACE=1          the mesh search prints each candidate it "
    "evaluates\n"
    "  LLMC_SEARCH_BOUND=off|check  the mesh search without its lower bound "
    "(check: beside it)\n";

} // namespace llmc

#endif // LLMC_TOOLS_ENVIRONMENTHELP_H
