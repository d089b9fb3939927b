//===- llmc-run.cpp - run a compiled Executable with the runtime alone ----===//
//
//   llmc-run MODEL.llmcx [--weights FILE.safetensors] [--inputs FILE.safetensors]
//                        [--init-seed N] [--threads N]
//
// Binds every argument of the program by name: parameters from --weights,
// data inputs from --inputs (either file may hold either), and, with
// --init-seed, parameters missing from the files from their initializers.
// Runs the program once and prints each output: scalars as
// "<name> = <value>" with 9 significant digits, tensors as their type.
// Links only the runtime: no MLIR, no LLVM (checked by CMake).
//
// Exit codes: 0 success, 1 the run failed (message printed), 2 bad usage.
//
//===----------------------------------------------------------------------===//

#include "runtime/DType.h"
#include "runtime/Executable.h"
#include "runtime/Session.h"
#include "runtime/io/Safetensors.h"

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace rt = llmc::rt;

namespace {

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

struct Options {
  std::string model;
  std::string weights;
  std::string inputs;
  bool init = false;
  uint64_t seed = 0;
  unsigned threads = 0;
};

void printUsage(FILE *out) {
  std::fprintf(out,
               "usage: llmc-run MODEL.llmcx [--weights FILE.safetensors] "
               "[--inputs FILE.safetensors]\n"
               "                [--init-seed N] [--threads N]\n\n"
               "Runs an Executable written by `llmc compile FILE -o "
               "MODEL.llmcx` once and prints its outputs.\n"
               "  --weights FILE   parameters by name (Hugging Face names)\n"
               "  --inputs FILE    data inputs by name (tokens, targets)\n"
               "  --init-seed N    initialize parameters missing from the "
               "files from their initializers\n"
               "  --threads N      CPU threads (default: every core)\n");
}

bool parseUnsigned(const char *text, uint64_t &value) {
  char *end = nullptr;
  errno = 0;
  unsigned long long parsed = std::strtoull(text, &end, 10);
  if (errno || !end || *end || text[0] == '-' || text[0] == '\0')
    return false;
  value = parsed;
  return true;
}

/// Returns 0 to go on, or an exit code.
int parseArguments(int argc, char **argv, Options &options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *flag) -> const char * {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "llmc-run: %s needs a value\n", flag);
        return nullptr;
      }
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      printUsage(stdout);
      return -1;
    }
    if (arg == "--weights" || arg == "--inputs") {
      const char *v = value(arg.c_str());
      if (!v)
        return kExitUsage;
      (arg == "--weights" ? options.weights : options.inputs) = v;
    } else if (arg == "--init-seed" || arg == "--threads") {
      const char *v = value(arg.c_str());
      uint64_t number;
      if (!v || !parseUnsigned(v, number)) {
        std::fprintf(stderr, "llmc-run: %s expects a non-negative integer\n",
                     arg.c_str());
        return kExitUsage;
      }
      if (arg == "--threads")
        options.threads = static_cast<unsigned>(number);
      else {
        options.init = true;
        options.seed = number;
      }
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "llmc-run: unknown option '%s' (see --help)\n",
                   arg.c_str());
      return kExitUsage;
    } else if (options.model.empty()) {
      options.model = arg;
    } else {
      std::fprintf(stderr, "llmc-run: one model expected, got '%s' and '%s'\n",
                   options.model.c_str(), arg.c_str());
      return kExitUsage;
    }
  }
  if (options.model.empty()) {
    printUsage(stderr);
    return kExitUsage;
  }
  return 0;
}

int failed(const rt::Status &status) {
  std::fprintf(stderr, "llmc-run: %s\n", status.message().c_str());
  return kExitFailed;
}

/// Fills a parameter from its initializer, deterministically from `seed`
/// and its position in the argument table.
rt::Status initialize(const rt::ArgumentInfo &arg, const rt::ValueInfo &value,
                      uint64_t seed, size_t index, rt::Session &session) {
  if (!rt::isFloat(value.dtype) || arg.init.kind == rt::InitSpec::Kind::None)
    return rt::Status::error(rt::StatusCode::InvalidArgument,
                             "parameter '" + arg.name +
                                 "' has no initializer; give it in --weights");
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ull + index);
  std::normal_distribution<double> normal(0.0, arg.init.scale);
  std::uniform_real_distribution<double> uniform(-arg.init.scale,
                                                 arg.init.scale);
  int64_t n = rt::numElements(value.shape);
  std::vector<double> values(static_cast<size_t>(n));
  for (double &v : values) {
    switch (arg.init.kind) {
    case rt::InitSpec::Kind::Normal:
      v = normal(rng);
      break;
    case rt::InitSpec::Kind::Uniform:
      v = uniform(rng);
      break;
    case rt::InitSpec::Kind::Ones:
      v = 1.0;
      break;
    default:
      v = 0.0;
    }
  }
  std::vector<uint8_t> bytes(value.bytes());
  for (int64_t i = 0; i < n; ++i) {
    switch (value.dtype) {
    case rt::DType::F32: {
      float f = static_cast<float>(values[i]);
      std::memcpy(bytes.data() + 4 * i, &f, 4);
      break;
    }
    case rt::DType::F64:
      std::memcpy(bytes.data() + 8 * i, &values[i], 8);
      break;
    case rt::DType::BF16: {
      uint16_t h = rt::floatToBf16(static_cast<float>(values[i]));
      std::memcpy(bytes.data() + 2 * i, &h, 2);
      break;
    }
    default: {
      uint16_t h = rt::floatToF16(static_cast<float>(values[i]));
      std::memcpy(bytes.data() + 2 * i, &h, 2);
    }
    }
  }
  return session.setArgument(arg.name, value.dtype, value.shape, bytes.data(),
                             bytes.size());
}

void printOutput(const std::string &name, const rt::TensorRef &tensor) {
  if (tensor.numElements() == 1 && rt::isFloat(tensor.dtype)) {
    double v = 0;
    switch (tensor.dtype) {
    case rt::DType::F32:
      v = *static_cast<const float *>(tensor.data);
      break;
    case rt::DType::F64:
      v = *static_cast<const double *>(tensor.data);
      break;
    case rt::DType::BF16:
      v = rt::bf16ToFloat(*static_cast<const uint16_t *>(tensor.data));
      break;
    default:
      v = rt::f16ToFloat(*static_cast<const uint16_t *>(tensor.data));
    }
    std::printf("%s = %.9g\n", name.c_str(), v);
    return;
  }
  std::printf("%s: %s%s\n", name.c_str(), rt::dtypeName(tensor.dtype),
              rt::formatShape(tensor.shape).c_str());
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  if (int code = parseArguments(argc, argv, options))
    return code < 0 ? 0 : code;

  rt::Executable exe;
  if (rt::Status status = rt::readExecutable(options.model, exe); !status)
    return failed(status);
  std::vector<rt::SafetensorsFile> files(2);
  std::vector<std::string> paths = {options.inputs, options.weights};
  for (size_t i = 0; i < paths.size(); ++i)
    if (!paths[i].empty())
      if (rt::Status status = rt::readSafetensors(paths[i], files[i]); !status)
        return failed(status);

  rt::SessionOptions sessionOptions;
  sessionOptions.threads = options.threads;
  std::unique_ptr<rt::Session> session;
  if (rt::Status status = rt::Session::create(exe, sessionOptions, session);
      !status)
    return failed(status);

  std::vector<std::string> missing;
  for (size_t i = 0; i < exe.arguments.size(); ++i) {
    const rt::ArgumentInfo &arg = exe.arguments[i];
    const rt::ValueInfo &value = exe.ranks.front().values[arg.value];
    const rt::SafetensorsTensor *tensor = nullptr;
    std::string from;
    for (size_t f = 0; f < files.size() && !tensor; ++f)
      if ((tensor = files[f].find(arg.name)))
        from = paths[f];
    rt::Status status = rt::Status::ok();
    if (tensor) {
      status = session->setArgument(arg.name, tensor->dtype, tensor->shape,
                                    tensor->data, tensor->bytes);
      if (!status)
        status = rt::Status::error(status.code(),
                                   from + ": " + status.message());
    } else if (options.init && arg.role == rt::ArgumentRole::Parameter) {
      status = initialize(arg, value, options.seed, i, *session);
    } else {
      missing.push_back(arg.name);
      continue;
    }
    if (!status)
      return failed(status);
  }
  if (!missing.empty()) {
    std::string list;
    for (size_t i = 0; i < missing.size() && i < 5; ++i)
      list += (i ? ", " : "") + missing[i];
    if (missing.size() > 5)
      list += ", ...";
    return failed(rt::Status::error(
        rt::StatusCode::InvalidArgument,
        std::to_string(missing.size()) +
            " argument(s) are in neither --weights nor --inputs: " + list +
            (options.init ? "" : " (--init-seed N initializes parameters)")));
  }

  if (rt::Status status = session->run(); !status)
    return failed(status);
  for (size_t i = 0; i < exe.outputs.size(); ++i) {
    rt::TensorRef tensor;
    if (rt::Status status = session->output(i, tensor); !status)
      return failed(status);
    printOutput(exe.outputs[i].name, tensor);
  }
  return 0;
}
