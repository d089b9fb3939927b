//===- ThreadPool.h - a fixed pool for parallel loops in CPU kernels -*- C++ -*-===//
#ifndef LLMC_RUNTIME_CPU_THREADPOOL_H
#define LLMC_RUNTIME_CPU_THREADPOOL_H

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace llmc::rt {

/// Runs parallel loops on a fixed set of threads (the caller is one of
/// them). Not reentrant: a body must not call parallelFor on the same pool.
class ThreadPool {
public:
  /// `threads` = 0 uses std::thread::hardware_concurrency().
  explicit ThreadPool(unsigned threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  unsigned size() const { return static_cast<unsigned>(workers_.size()) + 1; }

  /// Calls body(begin, end) on disjoint chunks covering [0, n), at least
  /// `grain` iterations each, and returns when all are done.
  void parallelFor(int64_t n, int64_t grain,
                   const std::function<void(int64_t, int64_t)> &body);

private:
  void workerLoop(unsigned index);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(int64_t, int64_t)> *body_ = nullptr;
  int64_t n_ = 0;
  int64_t chunk_ = 0;
  uint64_t generation_ = 0;
  unsigned pending_ = 0;
  bool stopping_ = false;
};

} // namespace llmc::rt

#endif // LLMC_RUNTIME_CPU_THREADPOOL_H
