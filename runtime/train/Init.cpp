//===- Init.cpp - initial values of parameters and optimizer state --------===//
#include "runtime/train/Init.h"
#include "runtime/Random.h"
#include "runtime/Sharding.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <thread>

namespace llmc::rt {

uint64_t initialStream(uint64_t seed, size_t index) {
  return splitMix(seed * kSplitMixGamma + index);
}

Status initialArgumentBytes(const Executable &executable, size_t index,
                            uint64_t seed, std::vector<uint8_t> &bytes) {
  const ArgumentInfo &arg = executable.arguments.at(index);
  const ValueInfo &value = executable.ranks.front().values[arg.value];
  // The GLOBAL tensor, drawn in one sequence: a sharded program starts from
  // exactly the single-device program's values, then binding splits them.
  Shape shape;
  LLMC_RETURN_IF_ERROR(argumentGlobalShape(executable, index, shape));
  int64_t n = numElements(shape);
  bytes.assign(static_cast<size_t>(n) * dtypeSize(value.dtype), 0);
  // AdamW moments start at zero (all-zero bytes); state with a constant
  // initializer (the fp16 loss scale) starts at its value.
  if (arg.role == ArgumentRole::OptimizerState &&
      arg.init.kind != InitSpec::Kind::Constant)
    return Status::ok();
  if (!isFloat(value.dtype) || arg.init.kind == InitSpec::Kind::None)
    return Status::error(StatusCode::InvalidArgument,
                         "parameter '" + arg.name +
                             "' has no initializer; give its value in a "
                             "weights file");
  // Elements 2j and 2j + 1 are drawn from outputs 2j and 2j + 1 of the
  // argument's SplitMix64 stream (runtime/Random.h), which can be jumped
  // to: the tensor is drawn in parallel chunks and is the same for any
  // number of threads. (A
  // sequential std::mt19937_64 with std::normal_distribution took 4.5 s of
  // the 5 s start of GPT-2 124M on the H200's host.)
  const uint64_t stream = initialStream(seed, index);
  const InitSpec init = arg.init;
  const DType dtype = value.dtype;
  uint8_t *out = bytes.data();
  auto store = [&](int64_t i, double v) {
    switch (dtype) {
    case DType::F32: {
      float f = static_cast<float>(v);
      std::memcpy(out + 4 * i, &f, 4);
      break;
    }
    case DType::F64:
      std::memcpy(out + 8 * i, &v, 8);
      break;
    case DType::BF16: {
      uint16_t h = floatToBf16(static_cast<float>(v));
      std::memcpy(out + 2 * i, &h, 2);
      break;
    }
    default: {
      uint16_t h = floatToF16(static_cast<float>(v));
      std::memcpy(out + 2 * i, &h, 2);
    }
    }
  };
  auto fill = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      double v = 0.0;
      switch (init.kind) {
      case InitSpec::Kind::Normal: {
        // Box-Muller on the pair of outputs of elements i & ~1: the even
        // element takes the cosine, the odd one the sine. u1 is in (0, 1] so
        // that the logarithm is finite.
        uint64_t k = static_cast<uint64_t>(i) & ~uint64_t{1};
        double u1 = 1.0 - unitInterval(splitMixAt(stream, k));
        double u2 = unitInterval(splitMixAt(stream, k + 1));
        double radius = init.scale * std::sqrt(-2.0 * std::log(u1));
        double angle = 2.0 * M_PI * u2;
        if ((i & 1) == 0 && i + 1 < end) {
          // Both of the pair, computed once.
          store(i, radius * std::cos(angle));
          store(i + 1, radius * std::sin(angle));
          ++i;
          continue;
        }
        v = radius * ((i & 1) ? std::sin(angle) : std::cos(angle));
        break;
      }
      case InitSpec::Kind::Uniform:
        v = init.scale *
            (2.0 * unitInterval(splitMixAt(stream, 2 * static_cast<uint64_t>(i))) -
             1.0);
        break;
      case InitSpec::Kind::Ones:
        v = 1.0;
        break;
      case InitSpec::Kind::Constant:
        v = init.scale;
        break;
      default:
        break;
      }
      store(i, v);
    }
  };
  // Chunks of 1 Mi elements over at most 16 threads; small tensors inline.
  constexpr int64_t kChunk = int64_t{1} << 20;
  int64_t chunks = (n + kChunk - 1) / kChunk;
  int64_t threads = std::min<int64_t>(
      {chunks, 16, std::max<int64_t>(1, std::thread::hardware_concurrency())});
  if (threads <= 1) {
    fill(0, n);
    return Status::ok();
  }
  std::atomic<int64_t> nextChunk{0};
  auto worker = [&] {
    for (int64_t c = nextChunk++; c < chunks; c = nextChunk++)
      fill(c * kChunk, std::min(n, (c + 1) * kChunk));
  };
  std::vector<std::thread> pool;
  for (int64_t t = 1; t < threads; ++t)
    pool.emplace_back(worker);
  worker();
  for (std::thread &thread : pool)
    thread.join();
  return Status::ok();
}

} // namespace llmc::rt
