//===- BatchOrder.cpp - which windows of the corpus make each batch -------===//
#include "runtime/data/BatchOrder.h"

#include "runtime/Random.h"

#include <algorithm>

namespace llmc::rt {

namespace {

uint64_t mix(uint64_t x) { return splitMix(x + kSplitMixGamma); }

/// The key of epoch `epoch`'s permutation.
uint64_t epochKey(uint64_t seed, uint64_t epoch) {
  return mix(seed ^ mix(epoch + 0x5151));
}

} // namespace

uint64_t permuteIndex(uint64_t i, uint64_t n, uint64_t key) {
  if (n <= 1)
    return 0;
  // A balanced Feistel network on 2h bits, the smallest even width holding
  // n - 1; values at or beyond n walk the cycle until they land in range
  // (at most 4x the domain, so a few rounds on average). Each round is a
  // bijection, so the whole is one; the walk keeps it one on [0, n).
  unsigned bits = 2;
  while (bits < 64 && (uint64_t(1) << bits) < n)
    bits += 2;
  const unsigned half = bits / 2;
  const uint64_t mask = (uint64_t(1) << half) - 1;
  uint64_t x = i;
  do {
    uint64_t left = x >> half, right = x & mask;
    for (unsigned round = 0; round < 6; ++round) {
      uint64_t f = mix(right ^ mix(key + round)) & mask;
      uint64_t next = left ^ f;
      left = right;
      right = next;
    }
    x = (left << half) | right;
  } while (x >= n);
  return x;
}

Status BatchOrder::create(const TokenCorpus &corpus, int64_t batchSize,
                          int64_t seqLen, bool shuffle, uint64_t seed,
                          BatchOrder &order) {
  order = BatchOrder();
  const std::string &setting = corpus.options().setting;
  if (batchSize <= 0 || seqLen <= 0 || batchSize > (int64_t(1) << 31) / seqLen)
    return Status::error(StatusCode::InvalidArgument,
                         setting + ": batch B=" + std::to_string(batchSize) +
                             " x T=" + std::to_string(seqLen) +
                             " is not valid; both must be positive and B*T "
                             "below 2^31");
  BatchOrder result;
  result.corpus_ = &corpus;
  result.batchSize_ = batchSize;
  result.seqLen_ = seqLen;
  result.shuffle_ = shuffle;
  result.seed_ = seed;
  const uint64_t T = static_cast<uint64_t>(seqLen);
  const uint64_t batchTokens = static_cast<uint64_t>(batchSize) * T;
  result.eligible_.resize(corpus.numShards());
  result.windowsBefore_.resize(corpus.numShards() + 1);
  for (size_t s = 0; s < corpus.numShards(); ++s) {
    uint64_t n = corpus.shard(s).size();
    uint64_t windows = n > T ? (n - 1) / T : 0;
    result.windowsBefore_[s] = result.windows_;
    if (shuffle) {
      result.windows_ += windows;
      result.eligible_[s] = windows > 0;
    } else {
      result.eligible_[s] = n >= batchTokens + 1;
      if (result.eligible_[s])
        result.batchesPerEpoch_ += (n - 1) / batchTokens;
    }
    if (!result.eligible_[s])
      result.skipped_.push_back(s);
  }
  result.windowsBefore_[corpus.numShards()] = result.windows_;
  if (shuffle)
    result.batchesPerEpoch_ = result.windows_ / static_cast<uint64_t>(batchSize);
  if (result.batchesPerEpoch_ == 0) {
    std::string what =
        shuffle ? "windows of T+1 = " + formatCount(T + 1) + " tokens, " +
                      formatCount(result.windows_) + " in all, fewer than the " +
                      std::to_string(batchSize) + " rows of one batch"
                : "a shard of B*T+1 = " + formatCount(batchTokens + 1) +
                      " tokens for one batch (B=" + std::to_string(batchSize) +
                      ", T=" + std::to_string(seqLen) +
                      "), and the largest holds fewer";
    return Status::error(StatusCode::InvalidArgument,
                         corpus.describe() + ": too little data: needs " +
                             what +
                             "; use a smaller batch or sequence length, or "
                             "more data (in fewer, larger shards)");
  }
  order = std::move(result);
  return Status::ok();
}

size_t BatchOrder::nextEligible(size_t shard) const {
  size_t n = eligible_.size();
  for (size_t step = 1; step <= n; ++step) {
    size_t s = (shard + step) % n;
    if (eligible_[s])
      return s;
  }
  return shard; // unreachable: create() found an eligible shard
}

DataPosition BatchOrder::start() const {
  DataPosition p;
  p.seed = shuffle_ ? seed_ : 0;
  if (!shuffle_)
    p.shard = eligible_[0] ? 0 : nextEligible(0);
  return p;
}

DataPosition BatchOrder::next(const DataPosition &p) const {
  DataPosition q = p;
  if (shuffle_) {
    if (++q.batch == batchesPerEpoch_) {
      q.batch = 0;
      ++q.epoch;
    }
    return q;
  }
  const uint64_t batchTokens =
      static_cast<uint64_t>(batchSize_) * static_cast<uint64_t>(seqLen_);
  q.offset += batchTokens;
  if (q.offset + batchTokens + 1 > corpus_->shard(q.shard).size()) {
    size_t following = nextEligible(q.shard);
    if (following <= q.shard)
      ++q.epoch;
    q.shard = following;
    q.offset = 0;
  }
  return q;
}

void BatchOrder::window(const DataPosition &p, int64_t row, size_t &shard,
                        uint64_t &offset) const {
  const uint64_t T = static_cast<uint64_t>(seqLen_);
  if (!shuffle_) {
    shard = p.shard;
    offset = p.offset + static_cast<uint64_t>(row) * T;
    return;
  }
  uint64_t index = p.batch * static_cast<uint64_t>(batchSize_) +
                   static_cast<uint64_t>(row);
  uint64_t w = permuteIndex(index, windows_, epochKey(p.seed, p.epoch));
  // The shard whose windows hold w: the last with windowsBefore_ <= w.
  auto it = std::upper_bound(windowsBefore_.begin(), windowsBefore_.end(), w);
  shard = static_cast<size_t>(it - windowsBefore_.begin()) - 1;
  offset = (w - windowsBefore_[shard]) * T;
}

Status BatchOrder::check(const DataPosition &p) const {
  auto refuse = [&](const std::string &why) {
    return Status::error(StatusCode::InvalidArgument,
                         "cannot continue the data from the saved position (" +
                             describe(p) + "): " + why +
                             "; was it saved for other data, another batch "
                             "shape or another shuffle setting?");
  };
  if (shuffle_) {
    if (p.seed != seed_)
      return refuse("it was shuffled with seed " + std::to_string(p.seed) +
                    ", this run's seed is " + std::to_string(seed_));
    if (p.batch >= batchesPerEpoch_)
      return refuse("an epoch of this corpus has " +
                    formatCount(batchesPerEpoch_) + " batches");
    return Status::ok();
  }
  if (p.shard >= eligible_.size() || !eligible_[p.shard])
    return refuse("the corpus has " + std::to_string(eligible_.size()) +
                  " shards and shard " + std::to_string(p.shard) +
                  " holds no batch");
  const uint64_t batchTokens =
      static_cast<uint64_t>(batchSize_) * static_cast<uint64_t>(seqLen_);
  if (p.offset % batchTokens != 0 ||
      p.offset + batchTokens + 1 > corpus_->shard(p.shard).size())
    return refuse("a batch of B*T+1 = " + formatCount(batchTokens + 1) +
                  " tokens does not start there in a shard of " +
                  formatCount(corpus_->shard(p.shard).size()) + " tokens");
  return Status::ok();
}

std::string BatchOrder::describe(const DataPosition &p) const {
  std::string text = "epoch " + std::to_string(p.epoch) + ", ";
  if (shuffle_)
    return text + "batch " + formatCount(p.batch) + " of " +
           formatCount(batchesPerEpoch_);
  std::string name = p.shard < corpus_->numShards()
                         ? corpus_->shard(p.shard).path()
                         : "shard " + std::to_string(p.shard);
  return text + name + " token " + formatCount(p.offset);
}

} // namespace llmc::rt
