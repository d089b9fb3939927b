//===- PlanKernels.cpp - codegen's CUDA kernel plan of a program ----------===//
//
// The steps of planCudaKernels: 1. every command's choice (or refusal),
// with the generated elementwise units; 2. every fused region's kernel or
// why not; 3. the multi-tensor groups and their units; 4. the hand-written
// units: every one that is always loaded, and the on-demand ones that a
// choice names an entry of.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/PlanKernels.h"

#include "codegen/cuda/DeviceUnits.h"
#include "codegen/cuda/KernelSelection.h"
#include "codegen/cuda/elementwise/FusedKernels.h"
#include "codegen/cuda/optimizer/MultiTensor.h"
#include "runtime/cuda/kernels/DeviceKernels.h"
#include "runtime/cuda/kernels/KernelPlan.h"
#include "runtime/cuda/libs/Nvrtc.h"
#include "runtime/cuda/session/PrecisionFit.h"

#include <algorithm>
#include <atomic>
#include <set>
#include <string>
#include <thread>

namespace llmc::rt::cuda {

namespace {

/// Collects the generated units of a plan, each once.
class UnitList {
public:
  explicit UnitList(CudaPlan &plan) : plan_(plan) {}
  void add(const std::string &entry, const std::string &source,
           std::vector<std::string> entries, uint8_t flags) {
    if (!seen_.insert(entry).second)
      return;
    CudaUnit unit;
    unit.name = entry;
    unit.source = source;
    unit.entries = std::move(entries);
    unit.flags = flags;
    plan_.units.push_back(std::move(unit));
  }

private:
  CudaPlan &plan_;
  std::set<std::string> seen_;
};

void planCommands(RankProgram &program, UnitList &units,
                  std::set<std::string> &entries) {
  for (const Command &command : program.commands) {
    KernelChoice choice;
    Status status = selectCommand(program, command, choice);
    CudaCommandPlan plan = commandPlan(choice);
    if (!status) {
      plan = CudaCommandPlan();
      plan.code = status.code();
      plan.error = status.message();
    } else if (choice.route == KernelChoice::Route::Elementwise) {
      units.add(choice.unit.entry, choice.unit.source,
                {choice.unit.entry, choice.unit.entry + "_vec"},
                CudaUnit::kGenerated);
    }
    entries.insert(choice.entries.begin(), choice.entries.end());
    program.cuda.commands.push_back(std::move(plan));
  }
}

void planFusedRegions(RankProgram &program, UnitList &units) {
  for (size_t c = 0; c < program.commands.size(); ++c) {
    const Command &command = program.commands[c];
    if (command.kind != CommandKind::Kernel ||
        command.kernel != KernelKind::FusedElementwise)
      continue;
    CudaFusedPlan fused;
    fused.marker = static_cast<int32_t>(c);
    FusedSource source;
    if (Status status = generateFusedKernel(program, c, source); !status) {
      fused.unfused = status.message();
    } else {
      fused.entry = source.entry;
      fused.elements = source.elements;
      // No contraction of a*b+c into one FMA across the region's ops: each
      // op rounds as its own kernel does.
      units.add(source.entry, source.source, {source.entry},
                CudaUnit::kGenerated | CudaUnit::kNoContraction);
    }
    program.cuda.fused.push_back(std::move(fused));
  }
}

void planMultiTensor(RankProgram &program, UnitList &units,
                     std::set<std::string> &entries) {
  for (const MultiTensorGroup &group : planMultiTensorGroups(program)) {
    if (group.kind == MultiTensorGroup::Kind::Elementwise)
      units.add(group.entry, group.source, {group.entry},
                CudaUnit::kGenerated | CudaUnit::kNoContraction);
    else
      entries.insert(group.entry);
    program.cuda.multiTensor.push_back(multiTensorPlan(group));
  }
}

} // namespace

Status handWrittenUnits(std::vector<CudaUnit> &units) {
  units.clear();
  for (const DeviceUnit &device : deviceKernelUnits()) {
    if (!device.error.empty())
      return Status::error(StatusCode::Internal, "the kernel unit " +
                                                     device.file + ": " +
                                                     device.error);
    CudaUnit unit;
    unit.name = device.name;
    unit.source = device.source;
    unit.entries = device.entries;
    unit.flags = device.onDemand ? CudaUnit::kOnDemand : 0;
    units.push_back(std::move(unit));
  }
  return Status::ok();
}

Status createHandWrittenKernels(std::unique_ptr<CudaKernels> &kernels) {
  std::vector<CudaUnit> units;
  LLMC_RETURN_IF_ERROR(handWrittenUnits(units));
  return CudaKernels::create(units, kernels);
}

void planCudaKernels(RankProgram &program) {
  program.cuda = CudaPlan();
  program.cuda.present = true;
  UnitList units(program.cuda);
  std::set<std::string> entries;
  planCommands(program, units, entries);
  planFusedRegions(program, units);
  planMultiTensor(program, units, entries);
  // The hand-written units. An embedded file that is missing (a broken
  // build) leaves the unit without source: loading it then fails.
  bool collectives = std::any_of(
      program.commands.begin(), program.commands.end(),
      [](const Command &c) { return c.kind == CommandKind::Collective; });
  for (const DeviceUnit &device : deviceKernelUnits()) {
    bool used = !device.onDemand ||
                (device.forCollectives && collectives) ||
                std::any_of(device.entries.begin(), device.entries.end(),
                            [&](const std::string &e) {
                              return entries.count(e) != 0;
                            });
    if (!used)
      continue;
    CudaUnit unit;
    unit.name = device.name;
    unit.source = device.error.empty() ? device.source : std::string();
    unit.entries = device.entries;
    unit.flags = device.onDemand ? CudaUnit::kOnDemand : 0;
    program.cuda.units.push_back(std::move(unit));
  }
}

Status compileCudaKernels(Executable &executable, const std::string &arch) {
  bool wellFormed = arch.size() > 3 && arch.compare(0, 3, "sm_") == 0 &&
                    std::all_of(arch.begin() + 3, arch.end(), [](char c) {
                      return c >= '0' && c <= '9';
                    });
  if (!wellFormed)
    return Status::error(StatusCode::InvalidArgument,
                         "--cuda-arch=" + arch +
                             ": expected a real architecture such as sm_90");
  // Units that need a newer architecture (the tensor-core flash attention
  // below sm_80) are left without a cubin: a device of `arch` never loads
  // them. A program whose types the architecture cannot run (bf16 below
  // sm_80) is refused here as the session would refuse it.
  int number = archNumber(arch);
  std::vector<CudaUnit *> units;
  std::vector<Executable *> pending = {&executable};
  while (!pending.empty()) {
    Executable *exe = pending.back();
    pending.pop_back();
    for (RankProgram &program : exe->ranks)
      LLMC_RETURN_IF_ERROR(checkPrecisionFitsDevice(program, number / 10,
                                                    number % 10, ""));
    for (RankProgram &program : exe->ranks)
      for (CudaUnit &unit : program.cuda.units)
        if (unitCompilesFor(unit.name, arch))
          units.push_back(&unit);
    for (Executable &companion : exe->companions)
      pending.push_back(&companion);
  }
  // The units side by side (GPT-2 124M has about 50), each through the
  // on-disk kernel cache; the first error is reported.
  std::vector<Status> results(units.size(), Status::ok());
  std::atomic<size_t> next{0};
  unsigned threads = std::max(
      1u, std::min<unsigned>(std::thread::hardware_concurrency(),
                             static_cast<unsigned>(units.size())));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&]() {
      for (size_t i = next++; i < units.size(); i = next++) {
        CudaUnit &unit = *units[i];
        NvrtcOptions options;
        options.arch = arch;
        if (unit.flags & CudaUnit::kNoContraction)
          options.extraOptions.push_back("--fmad=false");
        CompiledCuda compiled;
        results[i] = compileCuda(unit.source, unit.name + ".cu", options,
                                 compiled);
        if (results[i]) {
          unit.arch = arch;
          unit.cubin.assign(compiled.cubin.begin(), compiled.cubin.end());
        }
      }
    });
  for (std::thread &thread : pool)
    thread.join();
  for (size_t i = 0; i < units.size(); ++i)
    if (!results[i])
      return Status::error(results[i].code(),
                           "compiling the CUDA unit " + units[i]->name +
                               " for " + arch + ": " + results[i].message());
  return Status::ok();
}

void planCudaKernels(Executable &executable) {
  for (RankProgram &program : executable.ranks)
    planCudaKernels(program);
  for (Executable &companion : executable.companions)
    planCudaKernels(companion);
}

} // namespace llmc::rt::cuda
