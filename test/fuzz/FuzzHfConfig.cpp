//===- FuzzHfConfig.cpp - libFuzzer target: Hugging Face config.json ------===//
//
// parseHuggingFaceConfigText on any bytes; a config it accepts also goes
// through the checks and derived values its users call (validateModel,
// trainingRefusals, ropeInverseFrequencies).
//
//===----------------------------------------------------------------------===//
#include "frontend/config/RunDescription.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  llmc::HfOutcome outcome =
      llmc::parseHuggingFaceConfigText(text, "config.json");
  for (const llmc::ConfigDiagnostic &d : outcome.diagnostics)
    (void)d.format();
  if (outcome.model) {
    (void)llmc::validateModel(*outcome.model, {"config.json", 1, 1});
    (void)llmc::trainingRefusals(*outcome.model);
    (void)llmc::ropeInverseFrequencies(*outcome.model);
  }
  return 0;
}
