//===- FuzzSafetensors.cpp - libFuzzer target: safetensors header, layout -===//
//
// parseSafetensors on any bytes. A file it accepts must be what it claims:
// every tensor's bytes lie inside the input (each is read, so AddressSanitizer
// sees a view past the end), and serializing the tensors and metadata again
// gives a file that parses to the same names, dtypes, shapes and bytes.
//
//===----------------------------------------------------------------------===//
#include "runtime/io/Safetensors.h"
#include "test/fuzz/FuzzSupport.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

using namespace llmc::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  SafetensorsFile file;
  if (!parseSafetensors(std::vector<uint8_t>(data, data + size),
                        "fuzz.safetensors", file))
    return 0;
  unsigned checksum = 0;
  for (const auto &[name, tensor] : file.tensors()) {
    if (tensor.bytes != static_cast<uint64_t>(numElements(tensor.shape)) *
                            dtypeSize(tensor.dtype))
      llmc::fuzz::fail(name + ": byte count does not match the shape");
    for (uint64_t i = 0; i < tensor.bytes; ++i)
      checksum += tensor.data[i];
  }
  (void)checksum;

  std::vector<uint8_t> again;
  if (Status status =
          serializeSafetensors(file.tensors(), file.metadata(), again);
      !status)
    return 0; // e.g. a name that is not UTF-8 is refused on writing only
  SafetensorsFile reread;
  if (Status status = parseSafetensors(again, "reserialized", reread); !status)
    llmc::fuzz::fail("a serialized file does not parse: " + status.message());
  if (reread.tensors().size() != file.tensors().size() ||
      reread.metadata() != file.metadata())
    llmc::fuzz::fail("the serialized file has other tensors or metadata");
  for (const auto &[name, tensor] : file.tensors()) {
    const SafetensorsTensor *other = reread.find(name);
    if (!other || other->dtype != tensor.dtype ||
        other->shape != tensor.shape || other->bytes != tensor.bytes ||
        (tensor.bytes &&
         std::memcmp(other->data, tensor.data, tensor.bytes) != 0))
      llmc::fuzz::fail(name + ": differs after serializing");
  }
  return 0;
}
