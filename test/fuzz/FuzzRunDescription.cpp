//===- FuzzRunDescription.cpp - libFuzzer target: run.toml ----------------===//
//
// parseRunDescriptionText on any bytes: a diagnostic or a description, never
// a crash. The file is placed in a directory that does not exist, so that
// relative paths in it (hf_config, data, tokenizer) resolve to nothing.
//
//===----------------------------------------------------------------------===//
#include "frontend/config/RunDescription.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  llmc::ParseOutcome outcome =
      llmc::parseRunDescriptionText(text, "/nonexistent-llmc-fuzz/run.toml");
  for (const llmc::ConfigDiagnostic &d : outcome.diagnostics)
    (void)d.format();
  return 0;
}
