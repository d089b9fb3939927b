//===- CompileBench.cpp - how long llmc takes to compile a model ----------===//
//
// Google Benchmark of the compiler front to back as far as it exists: load
// a model (parse a .mlir file, or parse a run description and trace the
// model), then run the default pipeline. Tracks the project's target "cold
// compile of GPT-2 124M under 30 s on one core" (docs/architecture.md):
//
//   build/bin/llmc-bench-compile examples/gpt2-124m.toml
//
//   build/bin/llmc-bench-compile [--benchmark_filter=...] [FILE]
//
//===----------------------------------------------------------------------===//

#include "frontend/Source.h"
#include "ir/Registration.h"
#include "passes/Passes.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/SourceMgr.h"

#include <benchmark/benchmark.h>

#include <string>

namespace {

std::string &inputPath() {
  static std::string path = LLMC_DEFAULT_BENCH_INPUT;
  return path;
}

void compileOnce(benchmark::State &state, bool runPipeline) {
  mlir::DialectRegistry registry;
  llmc::registerLlmcDialects(registry);
  for (auto _ : state) {
    mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
    context.loadAllAvailableDialects();
    llvm::SourceMgr sourceMgr;
    mlir::OwningOpRef<mlir::ModuleOp> module =
        llmc::loadSource(inputPath(), context, sourceMgr).module;
    if (!module) {
      state.SkipWithError("cannot load the input");
      return;
    }
    if (runPipeline) {
      mlir::PassManager pm(&context);
      llmc::buildCompilePipeline(pm, llmc::CompilePipelineOptions());
      if (mlir::failed(pm.run(*module))) {
        state.SkipWithError("the pipeline failed");
        return;
      }
    }
    benchmark::DoNotOptimize(module.get());
  }
}

void BM_Load(benchmark::State &state) { compileOnce(state, false); }
void BM_Compile(benchmark::State &state) { compileOnce(state, true); }

BENCHMARK(BM_Load)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Compile)->Unit(benchmark::kMillisecond);

} // namespace

int main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  if (argc > 1)
    inputPath() = argv[1];
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
