// Helpers of the io-tests: a temporary directory per test and whole-file
// reads and writes that fail the test (not crash) when the disk does.
#ifndef LLMC_TEST_RUNTIME_IOTESTUTIL_H
#define LLMC_TEST_RUNTIME_IOTESTUTIL_H

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace llmc::test {

/// A fresh directory under the test temp dir, removed with its contents.
class TempDir {
public:
  TempDir() {
    std::string pattern = ::testing::TempDir() + "llmc-io-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (::mkdtemp(buffer.data()))
      path_ = buffer.data();
    else
      ADD_FAILURE() << "mkdtemp failed for " << pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty())
      std::filesystem::remove_all(path_, ignored);
  }
  const std::string &path() const { return path_; }
  std::string file(const std::string &name) const { return path_ + "/" + name; }

private:
  std::string path_;
};

inline void writeBytes(const std::string &path, const void *data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char *>(data),
            static_cast<std::streamsize>(size));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

inline void writeBytes(const std::string &path,
                       const std::vector<uint8_t> &bytes) {
  writeBytes(path, bytes.data(), bytes.size());
}

inline std::vector<uint8_t> readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in),
                              std::istreambuf_iterator<char>());
}

} // namespace llmc::test

#endif // LLMC_TEST_RUNTIME_IOTESTUTIL_H
