//===- embed.cpp - run an llmc Executable from a program of one's own -----===//
//
// Links only libllmc_runtime (no MLIR, no LLVM) and uses only the public API
// (llmc.hpp over llmc.h):
//
//   llmc compile examples/gpt2-tiny.toml -o gpt2-tiny.llmcx
//   llmc-embed-example gpt2-tiny.llmcx
//
// It lists the program's arguments, fills every parameter with small random
// values and the token inputs with random ids, runs the program, and prints
// each output. With weights this small the logits are nearly uniform, so a
// language model's loss is close to ln(vocabulary size): the program checks
// that and exits 1 if not, which makes it a test of the whole path.
//
//===----------------------------------------------------------------------===//

#include "llmc.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace {

size_t elements(const llmc_tensor_info &info) {
  size_t n = 1;
  for (int i = 0; i < info.rank; ++i)
    n *= static_cast<size_t>(info.shape[i]);
  return n;
}

int fail(const char *what, const llmc::Error &error) {
  std::fprintf(stderr, "llmc-embed-example: %s: %s\n", what,
               error.message.c_str());
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: llmc-embed-example MODEL.llmcx\n");
    return 2;
  }
  std::printf("llmc runtime %s\n", llmc_version());

  llmc::Executable exe;
  if (llmc::Error error = exe.load(argv[1]))
    return fail("load", error);
  llmc::Session session;
  if (llmc::Error error = session.create(exe))
    return fail("create a session", error);

  std::mt19937 rng(1234);
  std::normal_distribution<float> weight(0.0f, 0.02f);
  int64_t vocab = 0;
  for (size_t i = 0; i < exe.numArguments(); ++i) {
    llmc_tensor_info info;
    if (llmc::Error error = exe.argument(i, info))
      return fail("describe an argument", error);
    std::vector<int64_t> shape(info.shape, info.shape + info.rank);
    // The vocabulary: rows of the token embedding (the first parameter).
    if (info.role == LLMC_PARAMETER && vocab == 0 && info.rank == 2)
      vocab = info.shape[0];
    llmc::Error error;
    if (info.dtype == LLMC_F32) {
      std::vector<float> values(elements(info));
      for (float &v : values)
        v = weight(rng);
      error = session.setArgument(info.name, info.dtype, shape, values.data(),
                                  info.bytes);
    } else if (info.dtype == LLMC_I32) {
      std::uniform_int_distribution<int32_t> token(
          0, static_cast<int32_t>(vocab > 0 ? vocab - 1 : 0));
      std::vector<int32_t> values(elements(info));
      for (int32_t &v : values)
        v = token(rng);
      error = session.setArgument(info.name, info.dtype, shape, values.data(),
                                  info.bytes);
    } else {
      std::fprintf(stderr, "llmc-embed-example: argument '%s' has a dtype "
                           "this example does not fill\n",
                   info.name);
      return 1;
    }
    if (error)
      return fail("bind an argument", error);
  }
  std::printf("bound %zu arguments\n", exe.numArguments());

  if (llmc::Error error = session.run())
    return fail("run", error);

  for (size_t i = 0; i < exe.numOutputs(); ++i) {
    llmc_tensor_info info;
    if (llmc::Error error = exe.output(i, info))
      return fail("describe an output", error);
    if (info.dtype != LLMC_F32 || elements(info) != 1) {
      std::printf("%s: %zu bytes\n", info.name, info.bytes);
      continue;
    }
    float value = 0;
    if (llmc::Error error = session.readOutput(i, &value, sizeof value))
      return fail("read an output", error);
    std::printf("%s = %.6f\n", info.name, value);
    if (std::strcmp(info.name, "loss") == 0 && vocab > 0) {
      double expected = std::log(static_cast<double>(vocab));
      std::printf("ln(vocabulary %lld) = %.6f\n",
                  static_cast<long long>(vocab), expected);
      if (!(std::fabs(value - expected) < 0.1)) {
        std::fprintf(stderr, "llmc-embed-example: the loss of a model with "
                             "near-zero weights should be close to "
                             "ln(vocabulary)\n");
        return 1;
      }
    }
  }
  return 0;
}
