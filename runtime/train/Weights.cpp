//===- Weights.cpp - bind Hugging Face weights into a session -------------===//
#include "runtime/train/Weights.h"

#include "runtime/Sharding.h"
#include "runtime/cpu/ThreadPool.h"
#include "runtime/io/HfWeights.h"

#include <algorithm>
#include <chrono>

namespace llmc::rt {

std::string initialWeights(const Executable &exe, const std::string &given,
                           bool &strict) {
  auto strictness = exe.metadata.find(kHfStrictKey);
  strict = strictness == exe.metadata.end() || strictness->second != "false";
  if (!given.empty())
    return given;
  auto folder = exe.metadata.find(kHfWeightsKey);
  return folder == exe.metadata.end() ? "" : folder->second;
}

Status bindWeights(DeviceSession &session, const std::string &path,
                   bool strict, std::FILE *log, unsigned threads,
                   WeightsReport &report) {
  using Clock = std::chrono::steady_clock;
  Clock::time_point begin = Clock::now();
  report = WeightsReport();
  const Executable &exe = session.executable();

  // 1. The parameters (global shapes), and the other arguments' names,
  // which a file may hold too (--weights and --inputs in one file).
  std::vector<WeightTarget> targets;
  std::vector<std::string> others;
  for (size_t i = 0; i < exe.arguments.size(); ++i) {
    const ArgumentInfo &arg = exe.arguments[i];
    if (arg.role != ArgumentRole::Parameter) {
      others.push_back(arg.name);
      continue;
    }
    WeightTarget target;
    target.name = arg.name;
    target.dtype = exe.ranks.front().values[arg.value].dtype;
    LLMC_RETURN_IF_ERROR(argumentGlobalShape(exe, i, target.shape));
    targets.push_back(std::move(target));
  }

  // 2. The files and the plan.
  WeightFiles files;
  LLMC_RETURN_IF_ERROR(WeightFiles::open(path, files));
  WeightPlan plan;
  LLMC_RETURN_IF_ERROR(planWeights(files, targets, strict, plan, others));
  if (!plan.unused.empty() && log) {
    std::string list;
    for (size_t i = 0; i < plan.unused.size() && i < 8; ++i)
      list += (i ? ", " : "") + plan.unused[i];
    if (plan.unused.size() > 8)
      list += " and " + std::to_string(plan.unused.size() - 8) + " more";
    std::fprintf(log,
                 "warning: %s: %zu tensor(s) the model does not use (strict "
                 "= false): %s\n",
                 path.c_str(), plan.unused.size(), list.c_str());
  }

  // 3. Bind: a whole tensor from the map, converted where the parameter
  // lives; pieces assembled on the host.
  ThreadPool pool(std::min(threads ? threads : 16u, 16u));
  for (size_t t = 0; t < targets.size(); ++t) {
    const WeightTarget &target = targets[t];
    const WeightSource &source = plan.sources[t];
    Status status = Status::ok();
    if (const WeightPiece *whole = source.whole(numElements(target.shape))) {
      const SafetensorsTensor &tensor = *files.find(whole->tensor);
      report.converted += tensor.dtype != target.dtype;
      status = session.setArgumentConverting(target.name, tensor.dtype,
                                             target.shape, tensor.data,
                                             tensor.bytes, &pool);
    } else {
      std::vector<uint8_t> bytes;
      status = assembleWeight(files, target, source, bytes, &pool);
      if (status)
        status = session.setArgument(target.name, target.dtype, target.shape,
                                     bytes.data(), bytes.size());
      if (!source.pieces.empty())
        report.converted +=
            files.find(source.pieces.front().tensor)->dtype != target.dtype;
    }
    if (!status)
      return Status::error(status.code(), path + ": " + status.message());
    ++report.parameters;
  }
  report.files = files.paths().size();
  report.seconds =
      std::chrono::duration<double>(Clock::now() - begin).count();
  if (log)
    std::fprintf(log,
                 "weights: %zu parameters from %s (%zu file(s), %zu "
                 "converted) in %.2f s\n",
                 report.parameters, path.c_str(), report.files,
                 report.converted, report.seconds);
  return Status::ok();
}

} // namespace llmc::rt
