//===- BatchOrder.h - which windows of the corpus make each batch -*- C++ -*-===//
//
// A batch is B rows of T+1 consecutive tokens of one shard (the T inputs and
// their T next-token targets). Two orders:
//   - consecutive (`[data] shuffle = false`, llm.c's order): a batch is the
//     B*T+1 tokens from `offset` of a shard, rows T apart; the next batch
//     starts B*T further on; a shard with no room for another batch hands
//     over to the next one, the last shard to the first (a new epoch).
//     Shards shorter than one batch are skipped (and reported).
//   - shuffled (`shuffle = true`, the default for training): the corpus is
//     cut into windows of T+1 tokens, T apart, within each shard; every
//     epoch takes them in the order of its own pseudo-random permutation,
//     B at a time (the windows left over at an epoch's end wait for the
//     next epoch's order). The permutation is a keyed Feistel network over
//     the window indices (cycle-walking into range), so it costs no memory
//     however large the corpus, and it depends only on the seed and the
//     epoch: a DataPosition names any batch, and a resumed run reads exactly
//     the batches an uninterrupted one would.
// See docs/data.md.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_DATA_BATCHORDER_H
#define LLMC_RUNTIME_DATA_BATCHORDER_H

#include "runtime/data/TokenCorpus.h"

#include <cstdint>
#include <string>
#include <vector>

namespace llmc::rt {

/// Where the next batch starts; saved in checkpoints.
struct DataPosition {
  uint64_t epoch = 0;
  uint64_t shard = 0;  ///< consecutive: the shard of the batch
  uint64_t offset = 0; ///< consecutive: the batch's first token in it
  uint64_t batch = 0;  ///< shuffled: the batch's index within its epoch
  uint64_t seed = 0;   ///< shuffled: the seed of the permutations
  bool operator==(const DataPosition &other) const {
    return epoch == other.epoch && shard == other.shard &&
           offset == other.offset && batch == other.batch &&
           seed == other.seed;
  }
  bool operator!=(const DataPosition &other) const { return !(*this == other); }
};

/// The index `i` (< n) permuted by the keyed bijection of [0, n) that
/// `key` selects (a 6-round Feistel network; see the file comment).
uint64_t permuteIndex(uint64_t i, uint64_t n, uint64_t key);

class BatchOrder {
public:
  /// Fails, with the sizes and the fix, when the corpus holds no batch of
  /// `batchSize` rows of `seqLen` + 1 tokens.
  static Status create(const TokenCorpus &corpus, int64_t batchSize,
                       int64_t seqLen, bool shuffle, uint64_t seed,
                       BatchOrder &order);

  bool shuffled() const { return shuffle_; }
  int64_t batchSize() const { return batchSize_; }
  int64_t seqLen() const { return seqLen_; }
  /// The first batch of epoch 0.
  DataPosition start() const;
  /// The batch after `p`.
  DataPosition next(const DataPosition &p) const;
  /// Row `row` of the batch at `p`: its shard and first token.
  void window(const DataPosition &p, int64_t row, size_t &shard,
              uint64_t &offset) const;
  /// Whether `p` is a batch of this order (a resumed run's saved position
  /// on this corpus and batch shape); the message says what differs.
  Status check(const DataPosition &p) const;
  uint64_t batchesPerEpoch() const { return batchesPerEpoch_; }
  /// Shards too short for one batch (consecutive) or one window
  /// (shuffled): they are never read.
  const std::vector<size_t> &skippedShards() const { return skipped_; }
  /// "epoch 1, train_000003.bin token 1,048,576" / "epoch 2, batch 17 of
  /// 952".
  std::string describe(const DataPosition &p) const;

private:
  size_t nextEligible(size_t shard) const; ///< wraps to the first
  const TokenCorpus *corpus_ = nullptr;
  int64_t batchSize_ = 0, seqLen_ = 0;
  bool shuffle_ = false;
  uint64_t seed_ = 0;
  uint64_t batchesPerEpoch_ = 0;
  std::vector<bool> eligible_;
  std::vector<size_t> skipped_;
  /// Shuffled: windows before each shard (prefix sums), and in all.
  std::vector<uint64_t> windowsBefore_;
  uint64_t windows_ = 0;
};

} // namespace llmc::rt

#endif // LLMC_RUNTIME_DATA_BATCHORDER_H
