//===- SeedExecutables.cpp - small .llmcx seeds for fuzz-executable -------===//
//
//   fuzz-seed-executables IN.llmcx OUT_PREFIX
//
// Writes IN without its CUDA kernel plans and companions (the generated
// sources make an artifact of two commands 200 KB), in every format version
// the runtime reads: OUT_PREFIX-v5.llmcx ... -v2.llmcx. test/fuzz/
// make_corpus.py runs it on a few compiled programs.
//
//===----------------------------------------------------------------------===//
#include "runtime/Executable.h"

#include <cstdio>
#include <string>

using namespace llmc::rt;

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s IN.llmcx OUT_PREFIX\n", argv[0]);
    return 2;
  }
  Executable exe;
  if (Status status = readExecutable(argv[1], exe); !status) {
    std::fprintf(stderr, "%s\n", status.message().c_str());
    return 1;
  }
  exe.companions.clear();
  for (RankProgram &rank : exe.ranks)
    rank.cuda = CudaPlan();
  for (uint32_t version = kExecutableVersion;
       version >= kOldestExecutableVersion; --version) {
    if (version == 2 && !exe.mesh.empty())
      break; // version 2 has no mesh
    exe.version = version;
    std::string path =
        std::string(argv[2]) + "-v" + std::to_string(version) + ".llmcx";
    if (Status status = writeExecutable(exe, path); !status) {
      std::fprintf(stderr, "%s\n", status.message().c_str());
      return 1;
    }
  }
  return 0;
}
