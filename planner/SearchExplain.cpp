//===- SearchExplain.cpp - What the search's winner says to a user ---------===//
//
// The lines `llmc plan` prints under the winner: why it won over the
// fastest candidates that did not fit, why ZeRO is or is not in it, and
// the [parallel] block to paste into a run description. Split from
// Search.cpp, which keeps the search itself.
//
//===----------------------------------------------------------------------===//
#include "planner/Search.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace llmc::planner {

std::vector<std::string> explainWinner(const SearchResult &result,
                                       double budgetBytes) {
  std::vector<std::string> lines;
  const Evaluated *win = result.winner();
  if (!win) {
    lines.push_back("no candidate fits in " + gibText(budgetBytes) +
                    " per rank");
    if (!result.tooLarge.empty()) {
      const Evaluated &least = *std::min_element(
          result.tooLarge.begin(), result.tooLarge.end(),
          [](const Evaluated &a, const Evaluated &b) {
            return a.measure.memoryBytes() < b.measure.memoryBytes();
          });
      lines.push_back("the smallest, " + least.candidate.text() + ", needs " +
                      gibText(least.measure.memoryBytes()) +
                      " per rank: use more devices or a smaller batch");
    }
    return lines;
  }
  const Measure &w = win->measure;
  const StageMeasure &ws = w.busiestStage();
  // Two decimals, as the ranking prints a step: one number everywhere.
  auto ms = [](double s) { return llvm::formatv("{0:f2} ms", s * 1e3).str(); };
  std::string comm;
  for (const auto &[axes, s] : ws.commSeconds)
    comm += (comm.empty() ? "" : ", ") + axes + " " + ms(s);
  lines.push_back(llvm::formatv(
      "{0} wins: {1} per step ({2} kernels + {3} communication{4}{5}), "
      "{6} per rank of {7}",
      win->candidate.text(), ms(w.stepSeconds()), ms(ws.compute),
      ms(ws.communication), comm.empty() ? "" : ": " + comm,
      w.stages.size() > 1
          ? llvm::formatv(", pipeline {0}{1}, bubble {2:f1}%", w.schedule,
                          w.virtualStages > 1
                              ? " of " + std::to_string(w.virtualStages) +
                                    " virtual stages"
                              : std::string(),
                          w.bubble * 100)
                .str()
          : "",
      gibText(w.memoryBytes()), gibText(budgetBytes)));
  // The next best: what it costs more, term by term.
  if (result.ranked.size() > 1) {
    const Evaluated &next = result.ranked[1];
    const Measure &n = next.measure;
    const StageMeasure &ns = n.busiestStage();
    auto signedMs = [](double s) {
      return llvm::formatv("{0}{1:f2} ms", s >= 0 ? "+" : "", s * 1e3).str();
    };
    std::string terms = "kernels " + signedMs(ns.compute - ws.compute);
    std::map<std::string, double> axes = ns.commSeconds;
    for (const auto &[a, s] : ws.commSeconds)
      axes[a] -= s;
    for (const auto &[a, d] : axes)
      if (std::abs(d) >= 5e-6)
        terms += ", " + a + " communication " + signedMs(d);
    if (n.stages.size() > 1 || w.stages.size() > 1)
      terms += llvm::formatv(", bubble {0:f1}% vs {1:f1}%", n.bubble * 100,
                             w.bubble * 100)
                   .str();
    lines.push_back(llvm::formatv("the next best, {0}, takes {1} (+{2}: {3})",
                                  next.candidate.text(),
                                  ms(n.stepSeconds()),
                                  ms(n.stepSeconds() - w.stepSeconds()), terms));
  }
  // Faster candidates that do not fit, one per mesh.
  std::vector<const Evaluated *> faster;
  for (const Evaluated &e : result.tooLarge) {
    if (e.measure.stepSeconds() >= w.stepSeconds() || faster.size() >= 3)
      continue;
    bool seenMesh = false;
    for (const Evaluated *f : faster)
      seenMesh |= f->candidate.sameMesh(e.candidate);
    if (!seenMesh)
      faster.push_back(&e);
  }
  for (const Evaluated *f : faster)
    lines.push_back(llvm::formatv(
        "{0} would take {1} ({2} less) but does not fit by {3} (needs {4} "
        "per rank)",
        f->candidate.text(), ms(f->measure.stepSeconds()),
        ms(w.stepSeconds() - f->measure.stepSeconds()),
        gibText(f->measure.memoryBytes() - budgetBytes),
        gibText(f->measure.memoryBytes())));
  if (faster.empty())
    lines.push_back("no faster candidate was found that does not fit: the "
                    "winner is not held back by memory");
  return lines;
}

namespace {
/// The evaluated candidate (fitting or not) equal to `c`, if any.
const Evaluated *findEvaluated(const SearchResult &result, const Candidate &c) {
  for (const std::vector<Evaluated> *list : {&result.ranked, &result.tooLarge})
    for (const Evaluated &e : *list)
      if (e.candidate == c)
        return &e;
  return nullptr;
}
} // namespace

std::string explainZero(const SearchResult &result, double budgetBytes) {
  const Evaluated *win = result.winner();
  if (!win)
    return "";
  const Candidate &w = win->candidate;
  if (w.dp == 1)
    return "ZeRO: none, because it shards over dp and " + w.text() +
           " has no dp axis";
  // ZeRO-1 against none: the same collectives' bytes (a reduce-scatter
  // and an all-gather instead of an all-reduce) for a quarter of the
  // optimizer state's memory; 2 and 3 add collectives to 1.
  Candidate other = w;
  other.zero = w.zero == 0 ? 1 : 0;
  auto ms = [](double s) { return llvm::formatv("{0:f2} ms", s * 1e3).str(); };
  std::string lead = w.zero == 0 ? "ZeRO: none, because "
                                 : "ZeRO-" + std::to_string(w.zero) +
                                       ": chosen because ";
  if (const Evaluated *e = findEvaluated(result, other)) {
    double dt = e->measure.stepSeconds() - win->measure.stepSeconds();
    std::string time = llvm::formatv("{0} takes {1} ({2}{3})", other.text(),
                                     ms(e->measure.stepSeconds()),
                                     dt >= 0 ? "+" : "-", ms(std::abs(dt)))
                           .str();
    std::string memory =
        "needs " + gibText(e->measure.memoryBytes()) + " per rank" +
        (e->fits ? "" : ", over the budget of " + gibText(budgetBytes));
    if (w.zero == 0)
      return lead + time + " and " + memory + " against " +
             gibText(win->measure.memoryBytes()) +
             ": the winner fits without sharding its optimizer state";
    return lead + "without it " + time + " and " + memory +
           (e->fits ? " (it fits, but is slower)" : "");
  }
  for (const Pruned &p : result.pruned)
    if (p.candidate == other)
      return lead + other.text() + " was not evaluated: " + p.why.reason;
  return lead + other.text() + " was not evaluated";
}

std::vector<std::string> parallelBlock(const Candidate &c,
                                       llvm::StringRef devicesKind,
                                       int64_t layers) {
  std::vector<std::string> lines = {"[parallel]"};
  lines.push_back("devices = \"" + devicesKind.str() + ":" +
                  std::to_string(c.devices()) + "\"");
  for (auto [name, size] : {std::pair<const char *, int64_t>{"dp", c.dp},
                            {"tp", c.tp},
                            {"pp", c.pp},
                            {"cp", c.cp},
                            {"ep", c.ep},
                            {"zero", c.zero}})
    lines.push_back(std::string(name) + " = " + std::to_string(size));
  if (c.pp > 1) {
    // The search cuts equal chunks (without boundaries llmc-split-pipeline
    // balances them by cost, which is not what was predicted).
    int64_t chunks = c.pp * c.virtualStages;
    std::string bounds;
    for (int64_t s = 1; s < chunks; ++s)
      bounds += (s > 1 ? ", " : "") + std::to_string(s * layers / chunks);
    lines.push_back(std::string("pipeline_schedule = \"") +
                    (c.virtualStages > 1 ? "interleaved" : "1f1b") + "\"");
    if (c.virtualStages > 1)
      lines.push_back("virtual_stages = " + std::to_string(c.virtualStages));
    lines.push_back("pipeline_boundaries = [" + bounds + "]");
  }
  lines.push_back("# and in [train]: microbatches = " +
                  std::to_string(c.microbatches));
  lines.push_back(std::string("# and in [memory]: remat = \"") +
                  rematName(c.remat) + "\"");
  return lines;
}

} // namespace llmc::planner
