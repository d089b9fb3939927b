//===- CpuProfile.h - LLMC_PROFILE=1 on the CPU backend ----------*- C++ -*-===//
//
// The CPU counterpart of the CUDA session's kernel profile: with
// LLMC_PROFILE set (not "0"), a Session times every command of every rank
// in that thread's CPU time and prints, when it ends, the time per step of
// each kernel kind (and of copies and each collective kind) summed over
// the ranks. Thread CPU time, not wall time: eight ranks on two cores wait
// for a core, and a collective waits for its peers; neither is the work of
// the command. It is what `llmc plan --by-op --device-profile cpu`
// predicts per rank, for calibration (docs/planning.md, "CPU meshes").
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CPU_CPUPROFILE_H
#define LLMC_RUNTIME_CPU_CPUPROFILE_H

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace llmc::rt {

class CpuProfile {
public:
  /// A profile when LLMC_PROFILE is set (and not "0"), else null.
  static std::unique_ptr<CpuProfile> fromEnvironment(int ranks);

  /// The calling thread's CPU time in seconds.
  static double threadSeconds();

  /// Adds `seconds` of `rank` to the row `name`. Each rank writes only its
  /// own rows, so ranks on their own threads need no lock.
  void record(int rank, const char *name, double seconds);
  /// Counts one run of the program (one step).
  void endRun() { ++runs_; }

  /// The table: per step, summed over the ranks, most time first.
  void print(std::FILE *out) const;

private:
  explicit CpuProfile(int ranks) : rows_(static_cast<size_t>(ranks)) {}
  struct Row {
    int64_t count = 0;
    double seconds = 0;
  };
  std::vector<std::map<std::string, Row>> rows_;
  int64_t runs_ = 0;
};

} // namespace llmc::rt

#endif // LLMC_RUNTIME_CPU_CPUPROFILE_H
