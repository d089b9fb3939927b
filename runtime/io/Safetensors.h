//===- Safetensors.h - read and write .safetensors files --------*- C++ -*-===//
//
// Checkpoints and Hugging Face weights are safetensors files: an 8-byte
// little-endian header length, a JSON header naming every tensor's dtype,
// shape and byte range, then the tensors' bytes. The reader validates all of
// it (a checkpoint is user input) and the writer is atomic and byte-identical
// to Python's `safetensors` library for the same tensors. See
// docs/runtime.md, "Safetensors".
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_IO_SAFETENSORS_H
#define LLMC_RUNTIME_IO_SAFETENSORS_H

#include "runtime/DType.h"
#include "runtime/Status.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace llmc::rt {

/// The largest header the reader accepts, as in the reference library: a
/// larger one is a corrupt length, not a real header.
constexpr uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;

/// One tensor of a safetensors file: a view of bytes owned elsewhere (by the
/// SafetensorsFile it came from, or by the caller when writing). `data` is
/// row-major, little-endian, and not necessarily aligned to the element size.
struct SafetensorsTensor {
  DType dtype = DType::F32;
  Shape shape;
  const uint8_t *data = nullptr;
  uint64_t bytes = 0; ///< numElements(shape) * dtypeSize(dtype)
};

using SafetensorsMetadata = std::map<std::string, std::string>;

class MappedFile;

/// The contents of a safetensors file. It owns the file's bytes in one
/// buffer, or holds the file's memory map (mapSafetensors), and its tensors
/// are views into them (no copy per tensor), so it can be moved but not
/// copied.
class SafetensorsFile {
public:
  SafetensorsFile() = default;
  SafetensorsFile(SafetensorsFile &&) = default;
  SafetensorsFile &operator=(SafetensorsFile &&) = default;
  SafetensorsFile(const SafetensorsFile &) = delete;
  SafetensorsFile &operator=(const SafetensorsFile &) = delete;

  /// Every tensor by name.
  const std::map<std::string, SafetensorsTensor> &tensors() const {
    return tensors_;
  }
  /// The header's "__metadata__" (empty when it has none).
  const SafetensorsMetadata &metadata() const { return metadata_; }
  /// The tensor called `name`, or null.
  const SafetensorsTensor *find(const std::string &name) const;

private:
  friend Status parseSafetensors(std::vector<uint8_t> bytes,
                                 const std::string &what,
                                 SafetensorsFile &file);
  friend Status mapSafetensors(const std::string &path,
                               SafetensorsFile &file);
  friend Status parseSafetensorsView(const uint8_t *base, uint64_t size,
                                     const std::string &what,
                                     SafetensorsFile &result);
  std::vector<uint8_t> buffer_;
  std::shared_ptr<const MappedFile> mapping_;
  std::map<std::string, SafetensorsTensor> tensors_;
  SafetensorsMetadata metadata_;
};

/// Reads and validates the file at `path`. On failure `file` is left empty
/// and the message names the file, what was expected and what was found.
Status readSafetensors(const std::string &path, SafetensorsFile &file);

/// Maps the file at `path` read-only (runtime/io/MappedFile.h) and validates
/// it as readSafetensors does: the tensors are views of the map, paged in
/// when read, so a file of many GB costs no copy in memory.
Status mapSafetensors(const std::string &path, SafetensorsFile &file);

/// Validates `bytes` (a whole file's contents) and takes ownership of them;
/// `what` names the source in messages (usually a path).
Status parseSafetensors(std::vector<uint8_t> bytes, const std::string &what,
                        SafetensorsFile &file);

/// Serializes `tensors` and `metadata` into `out`. The layout is the
/// reference library's: tensors ordered by dtype (largest alignment first,
/// so every tensor is aligned to its element size) and then by name, the
/// header padded with spaces so the data section starts 8-byte aligned,
/// metadata keys sorted. Fails on a tensor whose byte count does not match
/// its dtype and shape, a name or string that is not UTF-8, or a tensor
/// called "__metadata__".
Status
serializeSafetensors(const std::map<std::string, SafetensorsTensor> &tensors,
                     const SafetensorsMetadata &metadata,
                     std::vector<uint8_t> &out);

/// Writes the same bytes as serializeSafetensors to `path`, atomically:
/// it writes `path.tmp`, fsyncs it, renames it over `path` and fsyncs the
/// directory, so a crash at any point leaves either the old `path` or the new
/// one, never a partial file. On failure `path` is untouched and `path.tmp` is
/// removed.
Status writeSafetensors(const std::string &path,
                        const std::map<std::string, SafetensorsTensor> &tensors,
                        const SafetensorsMetadata &metadata = {});

/// writeSafetensors without the tensors' bytes in memory: the `data` of
/// `tensors` is not read, and `produce(name, data)` is called once per
/// tensor, in file order, to point `data` at its `bytes` bytes (valid until
/// the next call), so that a writer converting tensors one by one holds one
/// at a time. A failing `produce` stops the write; `path` is untouched.
Status writeSafetensorsStreamed(
    const std::string &path,
    const std::map<std::string, SafetensorsTensor> &tensors,
    const SafetensorsMetadata &metadata,
    const std::function<Status(const std::string &name, const uint8_t *&data)>
        &produce);

/// The safetensors name of a dtype: "F32", "F64", "BF16", "F16", "I32",
/// "I64", "BOOL" (for i1).
const char *safetensorsDTypeName(DType dtype);

} // namespace llmc::rt

#endif // LLMC_RUNTIME_IO_SAFETENSORS_H
