//===- Search.h - the mesh search of `mesh = "auto"` -------------*- C++ -*-===//
//
// Issue #11, point 2 (docs/planning.md, "The search"): every mesh of the
// device count, every ZeRO stage, remat policy and microbatch count; the
// candidates that cannot work are pruned with a reason before anything is
// compiled (planner/Candidate.h), the candidates that cannot be faster
// than one that fits are skipped with the one that dominates them as the
// reason, and the rest are evaluated on probes (planner/Probe.h). The
// fastest predicted candidate that fits the memory budget wins.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_PLANNER_SEARCH_H
#define LLMC_PLANNER_SEARCH_H

#include "planner/Candidate.h"
#include "planner/Probe.h"

#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace llmc::planner {

/// The most layer copies (probe layers x microbatches) the search compiles
/// to check a winner whose microbatches were derived.
constexpr int64_t kMaxExactLayers = 64;

/// The bound defers a candidate only when it is over the step of the
/// kBoundRows-th fastest candidate that fits so far (and evaluates it at
/// the end when it is under the final ranking's row kBoundRows), so the
/// ranking's first kBoundRows rows, the rows `--json` prints, are the full
/// search's.
constexpr size_t kBoundRows = 20;

struct SearchOptions {
  int64_t devices = 1;
  /// Bytes per rank a candidate may use (its largest stage's arena).
  double budgetBytes = 0;
  /// The profile (devices_per_node already set from --nodes).
  DeviceProfile profile;
  /// Where a progress line goes about once a second (null: nowhere).
  llvm::raw_ostream *progress = nullptr;
  /// Defer a candidate before its probes when a lower bound of its step
  /// exceeds the kBoundRows-th fastest candidate that fits so far (rule
  /// "bound"): the kernels of its layers and its pipeline transfers over
  /// the bubble, for ZeRO-2/3 also the dp collectives of its layers
  /// (Search.cpp, step 3b). A deferred candidate whose bound is under the
  /// final ranking's row kBoundRows is evaluated after all (and the
  /// winner ranked again), so the winner and those rows are the search's
  /// without it (SearchBound.SameWinnerAsTheFullSearch) as long as it is a
  /// bound (SearchBound.LowerBoundUnderEveryStep).
  bool boundPruning = true;
  /// Compute the bound of every evaluated candidate (Evaluated::bound)
  /// but defer none: the full search, to check that they are bounds
  /// (`LLMC_SEARCH_BOUND=check`).
  bool checkBound = false;
};

struct Evaluated {
  Candidate candidate;
  Measure measure;
  bool fits = false;
  /// False when the microbatches were derived from a probe of one
  /// (Probe.h); the winner is compiled with them when its probes stay
  /// small (kMaxExactLayers).
  bool exact = true;
  /// The candidate's place in the enumeration: ties of the ranking are
  /// broken by it, so the order of evaluation does not pick the winner.
  int64_t order = 0;
  /// The lower bound of its step the search had before its probes (0:
  /// none); LLMC_SEARCH_TRACE prints it beside the step.
  double bound = 0;
};

struct Pruned {
  Candidate candidate;
  Rejection why;
};

struct SearchResult {
  /// The evaluated candidates that fit, fastest first.
  std::vector<Evaluated> ranked;
  /// The evaluated candidates that do not fit (also in `pruned`).
  std::vector<Evaluated> tooLarge;
  std::vector<Pruned> pruned;
  int64_t candidates = 0;
  int64_t compiles = 0;
  double seconds = 0;

  const Evaluated *winner() const {
    return ranked.empty() ? nullptr : &ranked.front();
  }
};

/// Searches the candidates of `run` (its model, batch, precision and
/// optimizer; its [parallel] mesh is ignored) on `options.devices` ranks.
SearchResult searchMeshes(mlir::MLIRContext &context,
                          const RunDescription &run,
                          const SearchOptions &options);

/// Why the winner wins, one sentence a line: its time split, the next best
/// and what it costs more, and the faster candidates that do not fit (by
/// how much).
std::vector<std::string> explainWinner(const SearchResult &result,
                                       double budgetBytes);

/// Why the winner has the ZeRO stage it has, one sentence: the same
/// mesh, remat and microbatches with another stage (ZeRO-1 when the winner
/// has none, none when it has one), its time and memory against the
/// winner's, or why that candidate was not evaluated. Empty without a
/// winner.
std::string explainZero(const SearchResult &result, double budgetBytes);

/// The winner as a `[parallel]` table to paste into a run description
/// (lines without the trailing newline): `devices` ("cuda:N" or "cpu:N"
/// after `devicesKind`), the five degrees, `zero`, and for a pipeline its
/// schedule, virtual stages and the equal boundaries the search assumed;
/// then, as comments, the winner's `[train] microbatches` and `[memory]
/// remat`, which belong to those tables.
std::vector<std::string> parallelBlock(const Candidate &winner,
                                       llvm::StringRef devicesKind,
                                       int64_t layers);

/// The model flops of one step, as docs/planning.md counts them for MFU:
/// tokens x (6 N + 12 L d T), N the parameters without position
/// embeddings (the matrices, the embedding, biases and norms).
double modelFlopsPerStep(const RunDescription &run);

/// Model flops utilization of a step of `seconds` on `devices` devices of
/// `profile` (its dense matmul peak for the run's precision).
double modelFlopsUtilization(const RunDescription &run, double seconds,
                             int64_t devices, const DeviceProfile &profile);

/// 5.3e9 -> "4.94 GiB"; below 0.1 GiB in MiB, below 1 MiB in KiB.
std::string gibText(double bytes);

} // namespace llmc::planner

#endif // LLMC_PLANNER_SEARCH_H
