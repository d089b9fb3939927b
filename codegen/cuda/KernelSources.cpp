//===- KernelSources.cpp - the kernels' .cu/.cuh files, built in ----------===//
#include "codegen/cuda/KernelSources.h"

#include <set>
#include <sstream>

namespace llmc::rt::cuda {

const std::vector<KernelSourceFile> &kernelSourceFiles() {
  static const std::vector<KernelSourceFile> files = {
#include "KernelSourceFiles.inc"
  };
  return files;
}

const char *findKernelSourceFile(const std::string &path) {
  for (const KernelSourceFile &file : kernelSourceFiles())
    if (path == file.path)
      return file.text;
  return nullptr;
}

namespace {

constexpr const char *kRoot = "runtime/cuda/kernels/";

/// The target of an #include line ("x" of `#include "x"`), with `angled`
/// set for `#include <x>`; false for any other line.
bool includeTarget(const std::string &line, std::string &target, bool &angled) {
  size_t at = line.find_first_not_of(" \t");
  if (at == std::string::npos || line[at] != '#')
    return false;
  at = line.find_first_not_of(" \t", at + 1);
  if (at == std::string::npos || line.compare(at, 7, "include") != 0)
    return false;
  at = line.find_first_not_of(" \t", at + 7);
  if (at == std::string::npos || (line[at] != '"' && line[at] != '<'))
    return false;
  angled = line[at] == '<';
  size_t end = line.find(angled ? '>' : '"', at + 1);
  if (end == std::string::npos)
    return false;
  target = line.substr(at + 1, end - at - 1);
  return true;
}

Status expand(const std::string &path, std::set<std::string> &seen,
              std::string &out) {
  const char *text = findKernelSourceFile(path);
  if (!text)
    return Status::error(StatusCode::NotFound, "no embedded kernel source " +
                                                   std::string(kRoot) + path);
  seen.insert(path);
  out += "#line 1 \"" + std::string(kRoot) + path + "\"\n";
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    std::string target;
    bool angled = false;
    if (!includeTarget(line, target, angled)) {
      out += line + "\n";
      continue;
    }
    std::string where =
        std::string(kRoot) + path + ":" + std::to_string(number) + ": ";
    if (angled)
      return Status::error(StatusCode::NotFound,
                           where + "#include <" + target +
                               ">: NVRTC units see no system headers; "
                               "include a file of runtime/cuda/kernels/ "
                               "with quotes");
    if (!findKernelSourceFile(target))
      return Status::error(StatusCode::NotFound,
                           where + "#include \"" + target +
                               "\" is not an embedded kernel source (paths "
                               "are relative to runtime/cuda/kernels/, and "
                               "every file is listed in "
                               "LLMC_CUDA_KERNEL_SOURCES)");
    if (!seen.count(target))
      LLMC_RETURN_IF_ERROR(expand(target, seen, out));
    out +=
        "#line " + std::to_string(number + 1) + " \"" + kRoot + path + "\"\n";
  }
  return Status::ok();
}

} // namespace

Status expandKernelUnit(const std::string &path, std::string &source) {
  source.clear();
  std::set<std::string> seen;
  return expand(path, seen, source);
}

} // namespace llmc::rt::cuda
