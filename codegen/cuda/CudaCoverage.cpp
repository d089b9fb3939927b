//===- CudaCoverage.cpp - which commands of a program the GPU can run -----===//
#include "codegen/cuda/CudaCoverage.h"

#include "codegen/cuda/DeviceUnits.h"
#include "codegen/cuda/KernelSelection.h"
#include "codegen/cuda/elementwise/ElementwiseKernels.h"
#include "codegen/cuda/elementwise/FusedKernels.h"
#include "codegen/cuda/optimizer/MultiTensor.h"
#include "runtime/cuda/kernels/DeviceKernels.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <set>

namespace llmc::rt::cuda {

namespace {

std::string kindOf(const RankProgram &program, const Command &command) {
  if (command.kind == CommandKind::Collective)
    return "Collective";
  if (command.kind == CommandKind::HostStep)
    return "HostStep";
  std::string text = std::string(kernelName(command.kernel)) + "(";
  for (size_t i = 0; i < command.inputs.size(); ++i)
    text += (i ? ", " : "") +
            std::string(dtypeName(program.values[command.inputs[i]].dtype));
  text += ") -> ";
  for (size_t i = 0; i < command.outputs.size(); ++i)
    text += (i ? ", " : "") +
            std::string(dtypeName(program.values[command.outputs[i]].dtype));
  return text;
}

/// Whether PTX defines the kernel `entry` (".entry <name>(").
bool definesEntry(const std::string &ptx, const std::string &entry) {
  return ptx.find(".entry " + entry + "(") != std::string::npos;
}

/// Where each entry of the hand-written units was chosen: entry ->
/// (rank, command).
using EntryUses = std::map<std::string, std::vector<std::pair<size_t, size_t>>>;

std::string where(bool manyRanks, size_t rank, const std::string &message) {
  return manyRanks ? "rank " + std::to_string(rank) + ": " + message : message;
}

/// Step 2 of checkCudaCoverage: every distinct unit through NVRTC, and the
/// chosen entries looked up in the PTX of the hand-written units.
Status compileUnits(const Executable &executable, const CoverageOptions &options,
                    bool manyRanks,
                    const std::map<std::string, ElementwiseSignature> &elementwise,
                    const std::map<std::string, std::string> &fusedSources,
                    const EntryUses &unitEntries, CoverageReport &report) {
  auto begin = std::chrono::steady_clock::now();
  for (const auto &[name, signature] : elementwise) {
    ElementwiseSource source;
    LLMC_RETURN_IF_ERROR(generateElementwiseKernel(signature, source));
    CompiledCuda compiled;
    LLMC_RETURN_IF_ERROR(compileCuda(source.source, source.entry + ".cu",
                                     options.nvrtc, compiled));
    ++report.units;
    for (const std::string &entry : {source.entry, source.entry + "_vec"})
      if (!definesEntry(compiled.ptx, entry))
        return Status::error(StatusCode::Internal,
                             "the unit of " + name + " does not define " +
                                 entry);
  }
  for (const auto &[entry, text] : fusedSources) {
    NvrtcOptions fusedOptions = options.nvrtc;
    fusedOptions.extraOptions.push_back("--fmad=false"); // as the session
    CompiledCuda compiled;
    LLMC_RETURN_IF_ERROR(
        compileCuda(text, entry + ".cu", fusedOptions, compiled));
    ++report.units;
    if (!definesEntry(compiled.ptx, entry))
      return Status::error(StatusCode::Internal,
                           "the fused unit does not define " + entry);
  }
  if (!unitEntries.empty()) {
    std::vector<std::string> ptx;
    // Entries of units that need a newer architecture than the target (the
    // tensor-core flash attention below sm_80): the launch runs the scalar
    // entries the choice also names there, so they are not gaps.
    std::set<std::string> notForArch;
    for (const DeviceUnit &unit : deviceKernelUnits()) {
      if (!unit.error.empty())
        return Status::error(StatusCode::Internal,
                             "the kernel unit " + unit.file + ": " +
                                 unit.error);
      if (!unitCompilesFor(unit.name, options.nvrtc.arch)) {
        notForArch.insert(unit.entries.begin(), unit.entries.end());
        continue;
      }
      CompiledCuda compiled;
      LLMC_RETURN_IF_ERROR(compileCuda(unit.source, unit.name + ".cu",
                                       options.nvrtc, compiled));
      ++report.units;
      ptx.push_back(std::move(compiled.ptx));
    }
    for (const auto &[entry, commands] : unitEntries) {
      const std::string &name = entry;
      if (notForArch.count(name))
        continue;
      if (std::any_of(ptx.begin(), ptx.end(), [&](const std::string &text) {
            return definesEntry(text, name);
          }))
        continue;
      for (auto [r, i] : commands) {
        const RankProgram &program = executable.ranks[r];
        const Command &command = program.commands[i];
        report.gaps.push_back(
            {i, command.origin,
             where(manyRanks, r,
                   "at " + command.origin + ": the CUDA kernel " + entry +
                          " chosen for " + kindOf(program, command) +
                          " is in no unit of the hand-written kernels"),
             kindOf(program, command)});
      }
    }
  }
  report.compileSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count();
  return Status::ok();
}

} // namespace

std::vector<std::string> CoverageReport::uncoveredKinds() const {
  std::vector<std::string> kinds;
  std::set<std::string> seen;
  for (const CoverageGap &gap : gaps)
    if (seen.insert(gap.kind).second)
      kinds.push_back(gap.kind);
  return kinds;
}

Status checkCudaCoverage(const Executable &executable,
                         const CoverageOptions &options,
                         CoverageReport &report) {
  report = CoverageReport();
  LLMC_RETURN_IF_ERROR(validateExecutable(executable));
  // A program of several ranks runs as one process per GPU
  // (createMultiProcessSession); every rank's commands are checked, and its
  // collectives go through NCCL, which runs every collective kind.
  bool manyRanks = executable.ranks.size() > 1;

  // 1. The choice per command, as CudaSession makes it.
  std::map<std::string, ElementwiseSignature> elementwise; // by describe()
  // entry -> (rank, command)
  EntryUses unitEntries;
  std::set<std::tuple<DType, DType>> gemmTypes;
  auto where = [&](size_t rank, const std::string &message) {
    return manyRanks ? "rank " + std::to_string(rank) + ": " + message
                     : message;
  };
  for (size_t r = 0; r < executable.ranks.size(); ++r) {
    const RankProgram &program = executable.ranks[r];
    // The commands of a region whose intermediates have no storage never
    // run on their own (the session skips them); the region's kernel is
    // checked below.
    std::vector<bool> oneKernel = commandsOfOneKernelRegions(program);
    for (size_t i = 0; i < program.commands.size(); ++i) {
      const Command &command = program.commands[i];
      ++report.commands;
      if (command.kind == CommandKind::Kernel ||
          command.kind == CommandKind::Gemm)
        ++report.kernels;
      if (oneKernel[i])
        continue;
      if (command.kind == CommandKind::Collective && manyRanks) {
        ++report.choices["NCCL collective"];
        continue;
      }
      KernelChoice choice;
      if (Status status = selectCommand(program, command, choice); !status) {
        report.gaps.push_back({i, command.origin,
                               where(r, status.message()),
                               kindOf(program, command)});
        continue;
      }
      switch (choice.route) {
      case KernelChoice::Route::Elementwise:
        elementwise.emplace(describe(choice.elementwise), choice.elementwise);
        ++report.choices["elementwise " + describe(choice.elementwise)];
        break;
      case KernelChoice::Route::DeviceUnit:
        for (const std::string &entry : choice.entries) {
          unitEntries[entry].push_back({r, i});
          ++report.choices[entry];
        }
        break;
      case KernelChoice::Route::Gemm:
        gemmTypes.insert({choice.matmul.operands, choice.matmul.result});
        ++report.choices[std::string("cuBLASLt ") +
                         dtypeName(choice.matmul.operands) + " x " +
                         dtypeName(choice.matmul.operands) + " -> " +
                         dtypeName(choice.matmul.result)];
        break;
      case KernelChoice::Route::Copy:
        ++report.choices["copy"];
        break;
      default:
        break;
      }
    }
  }
  report.entries = unitEntries.size();
  report.gemmTypes = gemmTypes.size();
  // Fused regions: the kernel the session would generate for each. A region
  // the generator refuses is not a gap when its commands can run one by
  // one; it is when its intermediates have no storage (a program compiled
  // for fused kernels), as CudaSession::create then fails.
  std::map<std::string, std::string> fusedSources; // entry -> source
  for (size_t r = 0; r < executable.ranks.size(); ++r) {
    const RankProgram &program = executable.ranks[r];
    for (size_t i = 0; i < program.commands.size(); ++i) {
      const Command &command = program.commands[i];
      if (command.kind != CommandKind::Kernel ||
          command.kernel != KernelKind::FusedElementwise)
        continue;
      FusedSource source;
      if (Status status = generateFusedKernel(program, i, source)) {
        ++report.fusedRegions;
        fusedSources.emplace(source.entry, source.source);
      } else if (regionNeedsOneKernel(program, i)) {
        report.gaps.push_back(
            {i, command.origin,
             where(r, "at " + command.origin +
                          ": the region's intermediates have no storage "
                          "(compiled for fused kernels), so it must run as "
                          "one kernel, but the generator refuses it (" +
                          status.message() + ")"),
             "FusedElementwise (no storage for its intermediates)"});
      } else {
        ++report.unfusedRegions;
        report.unfusedReasons.push_back(status.message());
      }
    }
  }
  // Multi-tensor launches: an elementwise group's generated unit is
  // compiled like a fused region's; a group of sums of squares runs
  // entries of the device unit.
  for (size_t r = 0; r < executable.ranks.size(); ++r)
    for (const MultiTensorGroup &group :
         planMultiTensorGroups(executable.ranks[r])) {
      ++report.multiTensorGroups;
      report.multiTensorCommands += group.members.size();
      if (group.kind == MultiTensorGroup::Kind::Elementwise) {
        fusedSources.emplace(group.entry, group.source);
        continue;
      }
      for (const char *entry : {"llmc_sum_squares_multi_partial",
                                "llmc_sum_squares_multi_finish"})
        unitEntries[entry].push_back({r, group.members.front()});
    }
  report.entries = unitEntries.size();
  if (!options.sourcesDir.empty()) {
    auto write = [&](const std::string &name, const std::string &text) {
      std::ofstream out(options.sourcesDir + "/" + name + ".cu");
      out << text;
      return static_cast<bool>(out);
    };
    bool written = true;
    for (const DeviceUnit &unit : deviceKernelUnits())
      written = write(unit.name, unit.source) && written;
    for (const auto &[entry, text] : fusedSources)
      written = write(entry, text) && written;
    if (!written)
      return Status::error(StatusCode::InvalidArgument,
                           "cannot write the sources into " +
                               options.sourcesDir +
                               " (does the folder exist?)");
  }
  if (!options.compile)
    return Status::ok();

  // 2. Every distinct unit through NVRTC; the entries looked up in its PTX.
  return compileUnits(executable, options, manyRanks, elementwise,
                      fusedSources, unitEntries, report);
}

} // namespace llmc::rt::cuda
