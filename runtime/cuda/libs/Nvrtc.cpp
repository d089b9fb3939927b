//===- Nvrtc.cpp - CUDA C++ to cubin with NVRTC, cached on disk -----------===//
//
// The cache key is a 128-bit hash (two FNV-1a 64 lanes with different
// offsets over the length-prefixed fields): the cache is a local build
// artifact, not a security boundary, so a non-cryptographic hash with a
// negligible accidental collision rate suffices. Entries are written to a
// temporary file and renamed, so a concurrent reader never sees half a
// cubin.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/libs/Nvrtc.h"

#include <nvrtc.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace llmc::rt::cuda {

namespace {

/// NVRTC's options before the caller's: C++17, line info for profilers.
/// Precise division and square root and no flush-to-zero are NVRTC's
/// defaults and the CPU kernels' numerics; they are spelled out so the
/// cache key records them.
std::vector<std::string> defaultOptions(const std::string &arch) {
  return {"-std=c++17",      "--gpu-architecture=" + arch,
          "-lineinfo",       "-prec-div=true",
          "-prec-sqrt=true", "-ftz=false"};
}

class Hash128 {
public:
  void add(const std::string &bytes) {
    uint64_t size = bytes.size();
    addRaw(reinterpret_cast<const char *>(&size), sizeof(size));
    addRaw(bytes.data(), bytes.size());
  }
  std::string hex() const {
    char text[33];
    std::snprintf(text, sizeof(text), "%016llx%016llx",
                  static_cast<unsigned long long>(lo_),
                  static_cast<unsigned long long>(hi_));
    return text;
  }

private:
  void addRaw(const char *data, size_t size) {
    constexpr uint64_t kPrime = 0x100000001b3ull;
    for (size_t i = 0; i < size; ++i) {
      lo_ = (lo_ ^ static_cast<uint8_t>(data[i])) * kPrime;
      hi_ = (hi_ ^ static_cast<uint8_t>(data[i] ^ 0x5a)) * kPrime;
    }
  }
  uint64_t lo_ = 0xcbf29ce484222325ull;
  uint64_t hi_ = 0x84222325cbf29ce4ull;
};

Status nvrtcError(nvrtcResult result, const char *what) {
  return Status::error(StatusCode::Internal,
                       std::string("NVRTC ") + what +
                           " failed: " + nvrtcGetErrorString(result));
}

#define LLMC_NVRTC_CHECK(call, what)                                           \
  do {                                                                         \
    if (nvrtcResult result_ = (call); result_ != NVRTC_SUCCESS)                \
      return nvrtcError(result_, what);                                        \
  } while (0)

bool readFile(const std::string &path, std::string &bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  bytes = buffer.str();
  return static_cast<bool>(in) || in.eof();
}

/// Writes through a temporary file and a rename; false on any failure.
bool writeFileAtomically(const std::string &path, const char *data,
                         size_t size) {
  std::string temp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(temp, std::ios::binary);
    if (!out.write(data, static_cast<std::streamsize>(size)))
      return false;
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    return false;
  }
  return true;
}

/// mkdir -p; false when the directory cannot be made.
bool makeDirectories(const std::string &dir) {
  for (size_t slash = 1; slash != std::string::npos;) {
    slash = dir.find('/', slash + 1);
    std::string prefix = dir.substr(0, slash);
    if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
      return false;
  }
  return true;
}

} // namespace

int nvrtcVersion() {
  int major = 0, minor = 0;
  if (::nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
    return 0;
  return major * 1000 + minor * 10;
}

std::string defaultKernelCacheDir() {
  if (const char *dir = std::getenv("LLMC_KERNEL_CACHE"); dir && *dir)
    return dir;
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/llmc/kernels";
  return "/tmp/llmc-kernels";
}

Status compileCuda(const std::string &source, const std::string &name,
                   const NvrtcOptions &options, CompiledCuda &result) {
  result = CompiledCuda();
  std::vector<std::string> flags = defaultOptions(options.arch);
  flags.insert(flags.end(), options.extraOptions.begin(),
               options.extraOptions.end());

  // 1. The key: source, every flag, the compiler's version.
  Hash128 hash;
  hash.add(source);
  for (const std::string &flag : flags)
    hash.add(flag);
  hash.add(std::to_string(nvrtcVersion()));
  result.key = hash.hex();

  // 2. A cache hit needs both files (the cubin is written last).
  std::string dir =
      options.cacheDir.empty() ? defaultKernelCacheDir() : options.cacheDir;
  std::string stem = dir + "/" + result.key;
  if (options.cache == KernelCache::Use) {
    std::string cubin;
    if (readFile(stem + ".ptx", result.ptx) &&
        readFile(stem + ".cubin", cubin) && !cubin.empty()) {
      result.cubin.assign(cubin.begin(), cubin.end());
      result.fromCache = true;
      return Status::ok();
    }
    result.ptx.clear();
  }

  // 3. Compile.
  nvrtcProgram program;
  LLMC_NVRTC_CHECK(nvrtcCreateProgram(&program, source.c_str(), name.c_str(), 0,
                                      nullptr, nullptr),
                   "nvrtcCreateProgram");
  std::vector<const char *> flagPointers;
  for (const std::string &flag : flags)
    flagPointers.push_back(flag.c_str());
  nvrtcResult compiled = nvrtcCompileProgram(
      program, static_cast<int>(flagPointers.size()), flagPointers.data());
  size_t logSize = 0;
  if (nvrtcGetProgramLogSize(program, &logSize) == NVRTC_SUCCESS &&
      logSize > 1) {
    result.log.resize(logSize);
    if (nvrtcGetProgramLog(program, result.log.data()) != NVRTC_SUCCESS)
      result.log.clear();
    while (!result.log.empty() &&
           (result.log.back() == '\0' || result.log.back() == '\n'))
      result.log.pop_back();
  }
  if (compiled != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&program);
    return Status::error(StatusCode::InvalidArgument,
                         "NVRTC could not compile " + name + " for " +
                             options.arch + ":\n" + result.log);
  }
  size_t cubinSize = 0, ptxSize = 0;
  nvrtcResult got = nvrtcGetCUBINSize(program, &cubinSize);
  if (got == NVRTC_SUCCESS) {
    result.cubin.resize(cubinSize);
    got = nvrtcGetCUBIN(program, result.cubin.data());
  }
  if (got == NVRTC_SUCCESS)
    got = nvrtcGetPTXSize(program, &ptxSize);
  if (got == NVRTC_SUCCESS && ptxSize > 0) {
    result.ptx.resize(ptxSize);
    got = nvrtcGetPTX(program, result.ptx.data());
    while (!result.ptx.empty() && result.ptx.back() == '\0')
      result.ptx.pop_back();
  }
  nvrtcDestroyProgram(&program);
  if (got != NVRTC_SUCCESS)
    return nvrtcError(got, "reading the cubin/PTX of a compiled program");
  if (result.cubin.empty())
    return Status::error(StatusCode::Internal,
                         "NVRTC produced no cubin for " + name +
                             " (is --gpu-architecture=" + options.arch +
                             " a real sm_XX architecture?)");

  // 4. Store; a failure only costs the next run a compile.
  if (options.cache == KernelCache::Use && makeDirectories(dir) &&
      writeFileAtomically(stem + ".ptx", result.ptx.data(), result.ptx.size()))
    (void)writeFileAtomically(stem + ".cubin", result.cubin.data(),
                              result.cubin.size());
  return Status::ok();
}

} // namespace llmc::rt::cuda
