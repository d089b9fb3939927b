//===- TokenLoader.h - batches of tokens, read ahead ------------*- C++ -*-===//
//
// The training loop's input: the [B, T] tokens and next-token targets of
// each step, in the BatchOrder of a TokenCorpus. A process reads only the
// rows of the global batch that its ranks hold (a data-parallel rank of a
// multi-process run reads B/dp rows, not B), and a background thread reads
// the next batches while the device runs the step. Every token read is
// checked against the vocabulary unless the corpus was scanned whole when
// it opened. See docs/data.md.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_DATA_TOKENLOADER_H
#define LLMC_RUNTIME_DATA_TOKENLOADER_H

#include "runtime/data/BatchOrder.h"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace llmc::rt {

struct TokenLoaderOptions {
  int64_t batchSize = 0; ///< B, the global batch
  int64_t seqLen = 0;    ///< T
  bool shuffle = false;
  uint64_t seed = 0; ///< the shuffled order's permutations
  /// The rows of the global batch this process reads, ascending and
  /// distinct; empty: all B.
  std::vector<int64_t> rows;
  /// Batches a background thread reads ahead; 0 reads in next().
  int prefetch = 2;
};

/// One batch: row-major [B, T] token ids and, for each, the token that
/// follows it. Rows the process does not read are 0.
struct TokenBatch {
  int64_t batchSize = 0;
  int64_t seqLen = 0;
  std::vector<int32_t> tokens;
  std::vector<int32_t> targets;
};

class TokenLoader {
public:
  TokenLoader(const TokenLoader &) = delete;
  TokenLoader &operator=(const TokenLoader &) = delete;
  ~TokenLoader();

  /// Builds the order (BatchOrder::create) on `corpus`, which must outlive
  /// the loader, and starts at its first batch.
  static Status open(const TokenCorpus &corpus,
                     const TokenLoaderOptions &options,
                     std::unique_ptr<TokenLoader> &loader);

  /// Fills `batch` (resized to [B, T]) with the next batch; fails, naming
  /// the file and offset, on a token outside the vocabulary.
  Status next(TokenBatch &batch);

  /// The position of the batch next() returns next.
  DataPosition position() const { return position_; }
  /// Continues from `p` (a position() of a run on the same corpus and
  /// shape); fails, changing nothing, when it is not a batch of this order.
  Status setPosition(const DataPosition &p);

  const TokenCorpus &corpus() const { return *corpus_; }
  const BatchOrder &order() const { return order_; }
  const TokenLoaderOptions &options() const { return options_; }
  /// Tokens read from the files so far, batches read ahead included (each
  /// row reads T+1), for tests of per-rank reading.
  uint64_t tokensRead() const;

private:
  TokenLoader() = default;
  struct Slot {
    DataPosition position;
    Status status = Status::ok();
    TokenBatch batch;
  };
  /// Reads the batch at `p` into `batch`.
  Status read(const DataPosition &p, TokenBatch &batch);
  void startThread();
  void stopThread();
  void produce();

  const TokenCorpus *corpus_ = nullptr;
  TokenLoaderOptions options_;
  BatchOrder order_;
  DataPosition position_;
  // The read-ahead: slots produced from produced_ on, consumed in order.
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Slot> ready_;
  std::vector<TokenBatch> spare_; ///< consumed buffers, for reuse
  DataPosition produced_;
  bool stop_ = false;
  bool exhausted_ = false; ///< the reader stopped at an error
  std::thread thread_;
  uint64_t tokensRead_ = 0;
};

} // namespace llmc::rt

#endif // LLMC_RUNTIME_DATA_TOKENLOADER_H
