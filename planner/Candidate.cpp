//===- Candidate.cpp - enumeration and the rules that need no compile -----===//
#include "planner/Candidate.h"

#include "frontend/config/ParallelChecks.h"

#include <functional>

namespace llmc::planner {

const char *rematName(RematChoice remat) {
  switch (remat) {
  case RematChoice::None:
    return "none";
  case RematChoice::Selective:
    return "selective";
  case RematChoice::Full:
    return "full";
  }
  return "none";
}

std::string Candidate::text() const {
  std::string out;
  auto add = [&](const std::string &piece) {
    out += (out.empty() ? "" : " ") + piece;
  };
  for (auto [name, size] : {std::pair<const char *, int64_t>{"dp", dp},
                            {"tp", tp},
                            {"pp", pp},
                            {"cp", cp},
                            {"ep", ep}})
    if (size > 1)
      add(name + std::to_string(size));
  if (out.empty())
    add("1 device");
  if (zero > 0)
    add("zero" + std::to_string(zero));
  if (remat != RematChoice::None)
    add(std::string("remat=") + rematName(remat));
  if (microbatches > 1)
    add("mb" + std::to_string(microbatches));
  if (virtualStages > 1)
    add("v" + std::to_string(virtualStages));
  return out;
}

bool Candidate::operator==(const Candidate &o) const {
  return dp == o.dp && tp == o.tp && pp == o.pp && cp == o.cp && ep == o.ep &&
         zero == o.zero && remat == o.remat && microbatches == o.microbatches &&
         virtualStages == o.virtualStages;
}

std::vector<Candidate> enumerateMeshes(int64_t devices) {
  std::vector<Candidate> meshes;
  std::vector<int64_t> divisors;
  for (int64_t d = 1; d <= devices; ++d)
    if (devices % d == 0)
      divisors.push_back(d);
  // Outer to inner as llmc-partition lays the axes out: pp, dp, ep, cp, tp.
  for (int64_t pp : divisors)
    for (int64_t dp : divisors)
      for (int64_t ep : divisors)
        for (int64_t cp : divisors) {
          int64_t rest = pp * dp * ep * cp;
          if (rest > devices || devices % rest != 0)
            continue;
          Candidate c;
          c.pp = pp;
          c.dp = dp;
          c.ep = ep;
          c.cp = cp;
          c.tp = devices / rest;
          meshes.push_back(c);
        }
  return meshes;
}

namespace {
std::string num(int64_t n) { return std::to_string(n); }
} // namespace

std::optional<Rejection> checkCandidate(const ModelConfig &model,
                                        const TrainConfig &train,
                                        const Candidate &c) {
  // 1. Tensor parallelism splits heads, kv heads, the MLP width and the
  //    vocabulary (docs/sharding.md).
  if (c.tp > 1) {
    if (model.numHeads % c.tp != 0)
      return Rejection{"tp: heads", "heads (" + num(model.numHeads) +
                                        ") not divisible by tp=" + num(c.tp)};
    if (model.numKvHeads % c.tp != 0)
      return Rejection{"tp: kv heads", "kv heads (" + num(model.numKvHeads) +
                                           ") not divisible by tp=" +
                                           num(c.tp)};
    if (model.intermediateSize % c.tp != 0)
      return Rejection{"tp: ffn width",
                       "ffn width (" + num(model.intermediateSize) +
                           ") not divisible by tp=" + num(c.tp)};
    if (model.vocabSize % c.tp != 0)
      return Rejection{"tp: vocabulary",
                       "vocabulary (" + num(model.vocabSize) +
                           ") not divisible by tp=" + num(c.tp) +
                           "; pad vocab_size to " +
                           num(paddedVocabulary(model.vocabSize, c.tp))};
  }
  // 2. The pipeline: the search cuts equal stages, and 1F1B with fewer
  //    microbatches than stages leaves stages idle for most of the step.
  if (c.pp > 1) {
    if (model.numLayers % c.pp != 0)
      return Rejection{"pp: layers", "layers (" + num(model.numLayers) +
                                         ") not divisible by pp=" + num(c.pp) +
                                         " (the search cuts equal stages)"};
    if (c.microbatches < c.pp)
      return Rejection{"pp: microbatches",
                       "microbatches (" + num(c.microbatches) +
                           ") fewer than pp=" + num(c.pp)};
    // The interleaved schedule: pp x v equal chunks of at least one layer,
    // and (llmc-split-pipeline) microbatches in groups of pp.
    if (c.virtualStages > 1) {
      if (model.numLayers % (c.pp * c.virtualStages) != 0)
        return Rejection{
            "pp: virtual stages",
            "layers (" + num(model.numLayers) + ") not divisible by pp*v=" +
                num(c.pp * c.virtualStages) +
                " (interleaved chunks of equal whole layers)"};
      if (c.microbatches % c.pp != 0)
        return Rejection{"pp: interleaved microbatches",
                         "microbatches (" + num(c.microbatches) +
                             ") not a multiple of pp=" + num(c.pp) +
                             " (the interleaved schedule runs them in groups "
                             "of pp)"};
    }
    if (c.zero == 2)
      return Rejection{"pp: zero2",
                       "zero=2 with pp > 1 is not searched (it reduce-scatters "
                       "every microbatch's gradients; TODO(#11))"};
  }
  if (c.pp <= 1 && c.virtualStages > 1)
    return Rejection{"pp: virtual stages",
                     "virtual stages (" + num(c.virtualStages) +
                         ") need a pipeline (pp > 1)"};
  // 3. Context parallelism: 2·cp chunks of the sequence (zigzag).
  if (c.cp > 1 && train.seqLen % (2 * c.cp) != 0)
    return Rejection{"cp: sequence", "sequence (" + num(train.seqLen) +
                                         ") not divisible by 2*cp=" +
                                         num(2 * c.cp)};
  // 4. Expert parallelism needs experts to split.
  if (c.ep > 1) {
    if (model.family != ModelFamily::Moe)
      return Rejection{"ep: no experts",
                       std::string("no experts for ep=") + num(c.ep) + " (a " +
                           modelFamilyName(model.family) + " model)"};
    if (model.numExperts % c.ep != 0)
      return Rejection{"ep: experts", "experts (" + num(model.numExperts) +
                                          ") not divisible by ep=" +
                                          num(c.ep)};
  }
  // 5. The batch: microbatches, then dp x ep over one microbatch.
  if (train.batchSize % c.microbatches != 0)
    return Rejection{"batch: microbatches",
                     "batch (" + num(train.batchSize) +
                         ") not divisible by microbatches=" +
                         num(c.microbatches)};
  int64_t micro = train.batchSize / c.microbatches;
  if (micro % (c.dp * c.ep) != 0)
    return Rejection{"batch: dp x ep",
                     "batch of a microbatch (" + num(micro) +
                         ") not divisible by dp*ep=" + num(c.dp * c.ep)};
  if (model.family == ModelFamily::Moe && c.dp * c.ep > 1) {
    TrainConfig t = train;
    t.microbatches = c.microbatches;
    std::string message =
        expertParallelError(model, t, c.dp, c.ep);
    if (!message.empty())
      return Rejection{"ep: capacity", message};
  }
  // 6. ZeRO shards over dp; stage 2 differs from 1 only with microbatches.
  if (c.zero > 0 && c.dp == 1)
    return Rejection{"zero: no dp", "zero=" + num(c.zero) +
                                        " needs dp > 1 (it shards over dp)"};
  if (c.zero == 2 && c.microbatches == 1)
    return Rejection{"zero: same program",
                     "zero=2 with one microbatch is the program of zero=1"};
  return std::nullopt;
}

} // namespace llmc::planner
