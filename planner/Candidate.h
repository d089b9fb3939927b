//===- Candidate.h - one point of the mesh search and its cheap rules -*- C++ -*-===//
//
// The mesh search of issue #11 (docs/planning.md, "The search") looks at
// candidates: the degrees of the five mesh axes (their product is the
// device count), the ZeRO stage, the remat policy and the microbatch count.
// This file enumerates them and holds the rules that reject a candidate
// before anything is compiled (a divisibility, an axis the model has no use
// for), each with a reason a person can act on. No MLIR here: only the run
// description's model and batch.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_PLANNER_CANDIDATE_H
#define LLMC_PLANNER_CANDIDATE_H

#include "frontend/config/RunDescription.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llmc::planner {

/// The remat policies the search tries (passes/Remat.cpp). `auto` is left
/// out: it measures the budget on the program it is given, and a probe has
/// fewer layers than the model.
enum class RematChoice { None, Selective, Full };

/// "none", "selective", "full" (the pass's names).
const char *rematName(RematChoice remat);

struct Candidate {
  int64_t dp = 1, tp = 1, pp = 1, cp = 1, ep = 1;
  int64_t zero = 0;
  RematChoice remat = RematChoice::None;
  int64_t microbatches = 1;
  /// Model chunks per pipeline stage: 1 is plain 1F1B, v > 1 the
  /// interleaved 1F1B schedule of v chunks per stage (Megatron-LM's).
  int64_t virtualStages = 1;

  int64_t devices() const { return dp * tp * pp * cp * ep; }
  /// The same degrees on every axis (ZeRO, remat and microbatches aside).
  bool sameMesh(const Candidate &o) const {
    return dp == o.dp && tp == o.tp && pp == o.pp && cp == o.cp && ep == o.ep;
  }
  /// "dp4 tp2 pp2 zero1 remat=selective mb4 v2": the axes of more than one
  /// rank, then what is not the default (v: interleaved virtual stages).
  std::string text() const;
  bool operator==(const Candidate &o) const;
};

/// Why a candidate was left out: `rule` is a short key for counting
/// ("tp: heads", "pp: layers", "does not fit", ...), `reason` the sentence
/// for this candidate ("heads (25) not divisible by tp=2").
struct Rejection {
  std::string rule;
  std::string reason;
};

/// Every assignment of degrees to (dp, tp, pp, cp, ep) whose product is
/// `devices`, with zero = 0, no remat and one microbatch.
std::vector<Candidate> enumerateMeshes(int64_t devices);

/// The rules that need no compile, in a fixed order; the first one the
/// candidate breaks, or nothing. They are what llmc-partition and
/// llmc-split-pipeline would reject, plus the search's own restrictions
/// (equal pipeline stages, at least pp microbatches for a pipeline).
std::optional<Rejection> checkCandidate(const ModelConfig &model,
                                        const TrainConfig &train,
                                        const Candidate &candidate);

} // namespace llmc::planner

#endif // LLMC_PLANNER_CANDIDATE_H
