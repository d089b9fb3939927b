//===- FuzzExecutable.cpp - libFuzzer target: .llmcx executables ----------===//
//
// parseExecutable (which validates) on any bytes. An executable it accepts
// must serialize to bytes that parse again and serialize to the same bytes.
//
//===----------------------------------------------------------------------===//
#include "runtime/Executable.h"
#include "test/fuzz/FuzzSupport.h"

#include <cstdint>
#include <vector>

using namespace llmc::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Executable exe;
  if (!parseExecutable(data, size, "fuzz.llmcx", exe))
    return 0;
  std::vector<uint8_t> bytes = serializeExecutable(exe);
  Executable again;
  if (Status status =
          parseExecutable(bytes.data(), bytes.size(), "reserialized", again);
      !status)
    llmc::fuzz::fail("a serialized executable does not parse: " +
                     status.message());
  if (serializeExecutable(again) != bytes)
    llmc::fuzz::fail("serializing the parsed executable changes it");
  return 0;
}
