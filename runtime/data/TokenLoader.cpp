//===- TokenLoader.cpp - batches of tokens, read ahead --------------------===//
#include "runtime/data/TokenLoader.h"

namespace llmc::rt {

TokenLoader::~TokenLoader() { stopThread(); }

Status TokenLoader::open(const TokenCorpus &corpus,
                         const TokenLoaderOptions &options,
                         std::unique_ptr<TokenLoader> &loader) {
  loader.reset();
  std::unique_ptr<TokenLoader> result(new TokenLoader());
  result->corpus_ = &corpus;
  result->options_ = options;
  LLMC_RETURN_IF_ERROR(BatchOrder::create(corpus, options.batchSize,
                                          options.seqLen, options.shuffle,
                                          options.seed, result->order_));
  for (size_t i = 0; i < options.rows.size(); ++i)
    if (options.rows[i] < 0 || options.rows[i] >= options.batchSize ||
        (i > 0 && options.rows[i] <= options.rows[i - 1]))
      return Status::error(StatusCode::InvalidArgument,
                           "the rows to read must be ascending, distinct and "
                           "below the batch size " +
                               std::to_string(options.batchSize));
  if (options.prefetch < 0)
    return Status::error(StatusCode::InvalidArgument,
                         "prefetch must be >= 0, got " +
                             std::to_string(options.prefetch));
  // The kernel's read-ahead: whole stretches in order, single pages when
  // the windows come from anywhere.
  for (size_t s = 0; s < corpus.numShards(); ++s)
    corpus.shard(s).advise(options.shuffle ? AccessPattern::Random
                                           : AccessPattern::Sequential);
  result->position_ = result->order_.start();
  result->produced_ = result->position_;
  loader = std::move(result);
  return Status::ok();
}

Status TokenLoader::read(const DataPosition &p, TokenBatch &batch) {
  const int64_t B = options_.batchSize, T = options_.seqLen;
  batch.batchSize = B;
  batch.seqLen = T;
  const size_t count = static_cast<size_t>(B * T);
  if (batch.tokens.size() != count) {
    batch.tokens.assign(count, 0);
    batch.targets.assign(count, 0);
  }
  const uint64_t vocab = static_cast<uint64_t>(corpus_->options().vocabSize);
  const bool check = !corpus_->scanned();
  auto readRow = [&](int64_t row) -> Status {
    size_t s = 0;
    uint64_t offset = 0;
    order_.window(p, row, s, offset);
    const TokenShard &shard = corpus_->shard(s);
    const uint64_t end = offset + static_cast<uint64_t>(T) + 1;
    if (check) {
      uint64_t bad = shard.findOutOfVocabulary(offset, end, vocab);
      if (bad != end)
        return outOfVocabularyError(shard, bad, corpus_->options().vocabSize);
    }
    int32_t *tokens = batch.tokens.data() + row * T;
    int32_t *targets = batch.targets.data() + row * T;
    uint32_t current = shard[offset];
    for (int64_t i = 0; i < T; ++i) {
      uint32_t following = shard[offset + static_cast<uint64_t>(i) + 1];
      tokens[i] = static_cast<int32_t>(current);
      targets[i] = static_cast<int32_t>(following);
      current = following;
    }
    return Status::ok();
  };
  uint64_t rows = 0;
  if (options_.rows.empty()) {
    for (int64_t row = 0; row < B; ++row, ++rows)
      LLMC_RETURN_IF_ERROR(readRow(row));
  } else {
    for (int64_t row : options_.rows) {
      LLMC_RETURN_IF_ERROR(readRow(row));
      ++rows;
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  tokensRead_ += rows * static_cast<uint64_t>(T + 1);
  return Status::ok();
}

uint64_t TokenLoader::tokensRead() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return tokensRead_;
}

void TokenLoader::produce() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] {
      return stop_ || ready_.size() < static_cast<size_t>(options_.prefetch);
    });
    if (stop_)
      return;
    // Reuse the buffers of a consumed batch when there is one; read
    // without the lock, so that next() can take what is ready meanwhile.
    Slot slot;
    slot.position = produced_;
    if (!spare_.empty()) {
      slot.batch = std::move(spare_.back());
      spare_.pop_back();
    }
    lock.unlock();
    slot.status = read(slot.position, slot.batch);
    lock.lock();
    if (stop_)
      return;
    bool failed = !slot.status;
    ready_.push_back(std::move(slot));
    produced_ = order_.next(produced_);
    changed_.notify_all();
    if (failed) {
      // The consumer reports it; nothing after it is read.
      exhausted_ = true;
      return;
    }
  }
}

void TokenLoader::startThread() {
  stop_ = false;
  exhausted_ = false;
  thread_ = std::thread([this] { produce(); });
}

void TokenLoader::stopThread() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

Status TokenLoader::next(TokenBatch &batch) {
  if (options_.prefetch == 0) {
    LLMC_RETURN_IF_ERROR(read(position_, batch));
    position_ = order_.next(position_);
    return Status::ok();
  }
  if (!thread_.joinable())
    startThread();
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return !ready_.empty() || exhausted_; });
  if (ready_.empty())
    return Status::error(StatusCode::InvalidArgument,
                         "the data loader stopped at an earlier error; "
                         "call setPosition to read again");
  Slot slot = std::move(ready_.front());
  ready_.pop_front();
  if (!slot.status)
    return slot.status;
  // The caller's previous buffers go back to the reader: no allocation
  // per batch.
  std::swap(batch, slot.batch);
  if (slot.batch.tokens.size() == batch.tokens.size())
    spare_.push_back(std::move(slot.batch));
  position_ = order_.next(slot.position);
  changed_.notify_all();
  return Status::ok();
}

Status TokenLoader::setPosition(const DataPosition &p) {
  LLMC_RETURN_IF_ERROR(order_.check(p));
  stopThread();
  ready_.clear();
  exhausted_ = false;
  position_ = p;
  produced_ = p;
  return Status::ok();
}

} // namespace llmc::rt
