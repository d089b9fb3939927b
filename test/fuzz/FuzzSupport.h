//===- FuzzSupport.h - what the libFuzzer targets share ---------*- C++ -*-===//
//
// The targets of test/fuzz/ (docs/testing.md, "Fuzzing and sanitizers") feed
// each parser bytes chosen by libFuzzer. Parsers that read a path (token
// shards, checkpoints) get the bytes as a file in a directory of this
// process under /dev/shm (memory, so a run of millions of inputs never
// touches a disk), or under $TMPDIR where /dev/shm is missing.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_TEST_FUZZ_FUZZSUPPORT_H
#define LLMC_TEST_FUZZ_FUZZSUPPORT_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>

namespace llmc::fuzz {

/// A directory of this process, created on first use and removed at exit.
inline const std::string &scratchDirectory() {
  static const std::string directory = [] {
    namespace fs = std::filesystem;
    fs::path base = fs::is_directory("/dev/shm") ? fs::path("/dev/shm")
                                                 : fs::temp_directory_path();
    fs::path dir = base / ("llmc-fuzz-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    static std::string removeAtExit = dir.string();
    std::atexit([] {
      std::error_code error;
      fs::remove_all(removeAtExit, error);
    });
    return dir.string();
  }();
  return directory;
}

/// Writes `size` bytes to `path` (replacing it); aborts when it cannot, as
/// a target that cannot set up its input must not report a clean run.
inline void writeFile(const std::string &path, const uint8_t *data,
                      size_t size) {
  FILE *file = std::fopen(path.c_str(), "wb");
  if (!file || (size && std::fwrite(data, 1, size, file) != size) ||
      std::fclose(file) != 0) {
    std::perror(path.c_str());
    std::abort();
  }
}

/// A property the target checks beyond "no crash" failed: report and abort,
/// so that libFuzzer saves the input.
[[noreturn]] inline void fail(const std::string &message) {
  std::fprintf(stderr, "fuzz property failed: %s\n", message.c_str());
  std::abort();
}

} // namespace llmc::fuzz

#endif // LLMC_TEST_FUZZ_FUZZSUPPORT_H
