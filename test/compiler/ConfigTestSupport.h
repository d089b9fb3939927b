//===- ConfigTestSupport.h - what the parser tests share --------*- C++ -*-===//
//
// The helpers of ConfigErrorsTest.cpp and ConfigExamplesTest.cpp: the
// messages of an input that must not parse, a clean parse, the base model
// sections the cases edit, a fresh directory for files, examples/ paths.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_TEST_COMPILER_CONFIGTESTSUPPORT_H
#define LLMC_TEST_COMPILER_CONFIGTESTSUPPORT_H

#include "frontend/config/RunDescription.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace llmc::config_test {

using Messages = std::vector<std::string>;

inline Messages format(const std::vector<ConfigDiagnostic> &diagnostics) {
  Messages messages;
  for (const ConfigDiagnostic &d : diagnostics)
    messages.push_back(d.format());
  return messages;
}

/// The messages of a run description that must not parse.
inline Messages tomlErrors(const std::string &text,
                    const std::string &path = "run.toml") {
  ParseOutcome outcome = parseRunDescriptionText(text, path);
  EXPECT_FALSE(outcome.ok());
  return format(outcome.diagnostics);
}

/// The messages of a config.json that must not parse.
inline Messages jsonErrors(const std::string &text) {
  HfOutcome outcome = parseHuggingFaceConfigText(text, "config.json");
  EXPECT_FALSE(outcome.model.has_value());
  return format(outcome.diagnostics);
}

/// A run description that must parse without a message.
inline RunDescription parseClean(const std::string &text,
                          const std::string &path = "run.toml") {
  ParseOutcome outcome = parseRunDescriptionText(text, path);
  EXPECT_EQ(format(outcome.diagnostics), Messages{});
  EXPECT_TRUE(outcome.ok());
  return outcome.ok() ? *outcome.description : RunDescription{};
}

// Bases the cases append to or edit; line numbers in the expected messages
// count from their first line.
inline const std::string kGpt2 = "[model]\n"             // 1
                          "family = \"gpt2\"\n"   // 2
                          "vocab_size = 128\n"    // 3
                          "layers = 2\n"          // 4
                          "width = 64\n"          // 5
                          "heads = 4\n"           // 6
                          "max_positions = 64\n"; // 7
inline const std::string kLlama = "[model]\n"            // 1
                           "family = \"llama\"\n" // 2
                           "vocab_size = 256\n"   // 3
                           "layers = 2\n"         // 4
                           "width = 128\n"        // 5
                           "heads = 8\n"          // 6
                           "kv_heads = 2\n"       // 7
                           "ffn_width = 344\n";   // 8

/// A fresh directory for files the parser must find, removed afterwards.
class ConfigFilesTest : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> path;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("llmc-config", path));
    dir = std::string(path.str());
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }

  /// Writes `text` to `relative` (creating folders) and returns its path.
  std::string write(const std::string &relative, const std::string &text) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, relative);
    EXPECT_FALSE(
        llvm::sys::fs::create_directories(llvm::sys::path::parent_path(path)));
    std::error_code error;
    llvm::raw_fd_ostream out(path, error);
    EXPECT_FALSE(error) << error.message();
    out << text;
    return std::string(path.str());
  }
  std::string file(const std::string &relative) const {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, relative);
    return std::string(path.str());
  }

  std::string dir;
};

inline std::string examplePath(const std::string &relative) {
  return std::string(LLMC_EXAMPLES_DIR) + "/" + relative;
}

/// A small GPT-2 config.json the cases edit.
inline const std::string kHfGpt2 = "{\n"                           // 1
                            "  \"model_type\": \"gpt2\",\n" // 2
                            "  \"n_embd\": 64,\n"           // 3
                            "  \"n_head\": 4,\n"            // 4
                            "  \"n_layer\": 2,\n"           // 5
                            "  \"n_positions\": 64,\n"      // 6
                            "  \"vocab_size\": 128\n"       // 7
                            "}\n";

inline std::string replaced(std::string text, const std::string &from,
                     const std::string &to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

} // namespace llmc::config_test

#endif // LLMC_TEST_COMPILER_CONFIGTESTSUPPORT_H
