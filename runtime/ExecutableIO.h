//===- ExecutableIO.h - the byte writer and reader of the format -*- C++ -*-===//
//
// Private to runtime/: the little-endian writer and the bounds-checked
// reader that ExecutableFormat.cpp and CudaPlanFormat.cpp share. A failed
// read keeps the first error (the byte offset and the field), which
// status() returns as DataLoss.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_EXECUTABLEIO_H
#define LLMC_RUNTIME_EXECUTABLEIO_H

#include "runtime/Executable.h"
#include "runtime/Status.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace llmc::rt::format {

constexpr size_t kHeaderBytes = 32;

class Writer {
public:
  template <typename T> void pod(T value) {
    const uint8_t *bytes = reinterpret_cast<const uint8_t *>(&value);
    out.insert(out.end(), bytes, bytes + sizeof(T));
  }
  void str(const std::string &s) {
    pod<uint32_t>(static_cast<uint32_t>(s.size()));
    out.insert(out.end(), s.begin(), s.end());
  }
  template <typename T> void podVector(const std::vector<T> &v) {
    pod<uint32_t>(static_cast<uint32_t>(v.size()));
    for (const T &x : v)
      pod<T>(x);
  }
  std::vector<uint8_t> out;
};

class Reader {
public:
  Reader(const uint8_t *data, size_t size, std::string what)
      : data(data), size(size), what(std::move(what)) {}

  template <typename T> bool pod(T &value, const char *field) {
    if (!need(sizeof(T), field))
      return false;
    std::memcpy(&value, data + pos, sizeof(T));
    pos += sizeof(T);
    return true;
  }
  bool str(std::string &s, const char *field) {
    uint32_t n;
    if (!pod(n, field) || !need(n, field))
      return false;
    s.assign(reinterpret_cast<const char *>(data + pos), n);
    pos += n;
    return true;
  }
  /// A count of items of at least `minItemBytes` each: rejects counts that
  /// could not fit in the rest of the file before allocating for them.
  bool count(uint32_t &n, size_t minItemBytes, const char *field) {
    if (!pod(n, field))
      return false;
    if (minItemBytes && static_cast<uint64_t>(n) * minItemBytes > size - pos)
      return fail(std::string("a count of ") + std::to_string(n) + " " +
                  field + " that cannot fit in the file");
    return true;
  }
  template <typename T> bool podVector(std::vector<T> &v, const char *field) {
    uint32_t n;
    if (!count(n, sizeof(T), field))
      return false;
    v.resize(n);
    for (T &x : v)
      if (!pod(x, field))
        return false;
    return true;
  }
  bool bytes(std::vector<uint8_t> &v, uint64_t n, const char *field) {
    if (!need(n, field))
      return false;
    v.assign(data + pos, data + pos + n);
    pos += n;
    return true;
  }
  bool atEnd() const { return pos == size; }

  Status status() const {
    return Status::error(StatusCode::DataLoss, what + ": " + error);
  }

private:
  bool need(uint64_t n, const char *field) {
    if (n <= size - pos)
      return true;
    return fail(std::string("truncated at byte ") +
                std::to_string(kHeaderBytes + pos) + " while reading " +
                field);
  }
  bool fail(std::string message) {
    if (error.empty())
      error = std::move(message) + "; the file is damaged: compile it again";
    return false;
  }

  const uint8_t *data;
  size_t size;
  size_t pos = 0;
  std::string what;
  std::string error;
};

/// The CUDA kernel plan of a rank program in format 5 (CudaPlanFormat.cpp):
/// a presence byte, then the plan.
void writeCudaPlan(Writer &w, const CudaPlan &plan);
bool readCudaPlan(Reader &r, CudaPlan &plan);
/// That a present plan fits its program: one choice per command, known
/// routes, kinds and types, fused regions at FusedElementwise markers,
/// multi-tensor members inside the program. `where` is "rank N: ".
Status validateCudaPlan(const RankProgram &program, const std::string &what,
                        const std::string &where);

} // namespace llmc::rt::format

#endif // LLMC_RUNTIME_EXECUTABLEIO_H
