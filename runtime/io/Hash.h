//===- Hash.h - the 64-bit content hash of checkpoints ----------*- C++ -*-===//
//
// XXH64 (xxHash, 64-bit, seed 0), incremental: the checksum a checkpoint
// records of its tensors (runtime/train/Checkpoint.cpp). Chosen over sha256
// for speed: it hashes 8 bytes per multiply, several GB/s on one core where
// sha256 without SHA extensions does ~0.5 GB/s, and a GPT-2 124M checkpoint
// is 1.5 GB hashed at every save and resume. It detects damage (bit flips,
// truncated copies, a file of another step), not tampering: it is not a
// cryptographic hash. Its values are those of the reference implementation
// (XXH64 of "" is ef46db3751d8e999), so `xxhsum -H1` style tools agree.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_IO_HASH_H
#define LLMC_RUNTIME_IO_HASH_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace llmc::rt {

/// XXH64 over bytes fed in any number of update() calls.
class Xxh64 {
public:
  void update(const void *data, size_t size) {
    const uint8_t *p = static_cast<const uint8_t *>(data);
    total_ += size;
    if (buffered_ + size < 32) {
      std::memcpy(buffer_ + buffered_, p, size);
      buffered_ += size;
      return;
    }
    if (buffered_) {
      size_t fill = 32 - buffered_;
      std::memcpy(buffer_ + buffered_, p, fill);
      stripe(buffer_);
      p += fill;
      size -= fill;
      buffered_ = 0;
    }
    for (; size >= 32; p += 32, size -= 32)
      stripe(p);
    std::memcpy(buffer_, p, size);
    buffered_ = size;
  }

  uint64_t digest() const {
    uint64_t h;
    if (total_ >= 32) {
      h = rotl(v_[0], 1) + rotl(v_[1], 7) + rotl(v_[2], 12) + rotl(v_[3], 18);
      for (uint64_t v : v_) {
        h ^= round(0, v);
        h = h * kP1 + kP4;
      }
    } else {
      h = kP5;
    }
    h += total_;
    const uint8_t *p = buffer_;
    size_t left = buffered_;
    for (; left >= 8; p += 8, left -= 8) {
      h ^= round(0, read64(p));
      h = rotl(h, 27) * kP1 + kP4;
    }
    if (left >= 4) {
      uint32_t k;
      std::memcpy(&k, p, 4);
      h ^= static_cast<uint64_t>(k) * kP1;
      h = rotl(h, 23) * kP2 + kP3;
      p += 4;
      left -= 4;
    }
    for (; left; ++p, --left) {
      h ^= *p * kP5;
      h = rotl(h, 11) * kP1;
    }
    h ^= h >> 33;
    h *= kP2;
    h ^= h >> 29;
    h *= kP3;
    h ^= h >> 32;
    return h;
  }

  /// The digest as 16 lowercase hex digits.
  std::string hex() const {
    static const char *kDigits = "0123456789abcdef";
    uint64_t h = digest();
    std::string text(16, '0');
    for (int i = 15; i >= 0; --i, h >>= 4)
      text[i] = kDigits[h & 15];
    return text;
  }

private:
  static constexpr uint64_t kP1 = 11400714785074694791ULL;
  static constexpr uint64_t kP2 = 14029467366897019727ULL;
  static constexpr uint64_t kP3 = 1609587929392839161ULL;
  static constexpr uint64_t kP4 = 9650029242287828579ULL;
  static constexpr uint64_t kP5 = 2870177450012600261ULL;

  static uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
  static uint64_t read64(const uint8_t *p) {
    uint64_t v;
    std::memcpy(&v, p, 8); // little-endian hosts only, as the file format
    return v;
  }
  static uint64_t round(uint64_t acc, uint64_t input) {
    acc += input * kP2;
    return rotl(acc, 31) * kP1;
  }
  void stripe(const uint8_t *p) {
    for (int i = 0; i < 4; ++i)
      v_[i] = round(v_[i], read64(p + 8 * i));
  }

  uint64_t v_[4] = {kP1 + kP2, kP2, 0, 0 - kP1};
  uint8_t buffer_[32] = {};
  size_t buffered_ = 0;
  uint64_t total_ = 0;
};

} // namespace llmc::rt

#endif // LLMC_RUNTIME_IO_HASH_H
