//===- CpuProfile.cpp - LLMC_PROFILE=1 on the CPU backend -----------------===//
#include "runtime/cpu/CpuProfile.h"

#include <algorithm>
#include <cstdlib>
#include <ctime>

namespace llmc::rt {

std::unique_ptr<CpuProfile> CpuProfile::fromEnvironment(int ranks) {
  const char *env = std::getenv("LLMC_PROFILE");
  if (!env || !*env || std::string(env) == "0")
    return nullptr;
  return std::unique_ptr<CpuProfile>(new CpuProfile(ranks));
}

double CpuProfile::threadSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

void CpuProfile::record(int rank, const char *name, double seconds) {
  Row &row = rows_[static_cast<size_t>(rank)][name];
  ++row.count;
  row.seconds += seconds;
}

void CpuProfile::print(std::FILE *out) const {
  if (runs_ == 0)
    return;
  std::map<std::string, Row> total;
  for (const auto &rank : rows_)
    for (const auto &[name, row] : rank) {
      total[name].count += row.count;
      total[name].seconds += row.seconds;
    }
  std::vector<std::pair<std::string, Row>> sorted(total.begin(), total.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto &a,
                                                    const auto &b) {
    return a.second.seconds > b.second.seconds;
  });
  double all = 0;
  for (const auto &entry : sorted)
    all += entry.second.seconds;
  double steps = static_cast<double>(runs_);
  std::fprintf(out,
               "LLMC_PROFILE (cpu): %lld steps on %zu rank(s); per step, "
               "summed over the ranks, in thread CPU time:\n"
               "  %-24s %9s %11s %7s\n",
               static_cast<long long>(runs_), rows_.size(), "command",
               "count", "ms", "share");
  for (const auto &[name, row] : sorted)
    std::fprintf(out, "  %-24s %9.1f %11.3f %6.1f%%\n", name.c_str(),
                 static_cast<double>(row.count) / steps,
                 1e3 * row.seconds / steps,
                 all > 0 ? 100 * row.seconds / all : 0.0);
  std::fprintf(out, "  %-24s %9s %11.3f\n", "total", "", 1e3 * all / steps);
}

} // namespace llmc::rt
