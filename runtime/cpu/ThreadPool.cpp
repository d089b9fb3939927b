//===- ThreadPool.cpp - a fixed pool for parallel loops in CPU kernels ----===//
#include "runtime/cpu/ThreadPool.h"

#include <algorithm>

namespace llmc::rt {

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 1; i < threads; ++i)
    workers_.emplace_back([this, i] { workerLoop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread &worker : workers_)
    worker.join();
}

void ThreadPool::parallelFor(int64_t n, int64_t grain,
                             const std::function<void(int64_t, int64_t)> &body) {
  if (n <= 0)
    return;
  int64_t parts = std::min<int64_t>(size(), std::max<int64_t>(1, n / std::max<int64_t>(1, grain)));
  if (parts <= 1 || workers_.empty()) {
    body(0, n);
    return;
  }
  int64_t chunk = (n + parts - 1) / parts;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    body_ = &body;
    n_ = n;
    chunk_ = chunk;
    pending_ = static_cast<unsigned>(workers_.size());
    ++generation_;
  }
  wake_.notify_all();
  // The caller takes chunk 0; worker i takes chunk i.
  body(0, std::min(n, chunk));
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [this] { return pending_ == 0; });
  body_ = nullptr;
}

void ThreadPool::workerLoop(unsigned index) {
  uint64_t seen = 0;
  while (true) {
    const std::function<void(int64_t, int64_t)> *body;
    int64_t begin, end;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_)
        return;
      seen = generation_;
      body = body_;
      begin = std::min(n_, chunk_ * index);
      end = std::min(n_, begin + chunk_);
    }
    if (begin < end)
      (*body)(begin, end);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--pending_ == 0)
        done_.notify_one();
    }
  }
}

} // namespace llmc::rt
