//===- DeviceSession.cpp - the binding checks every session shares --------===//
#include "runtime/DeviceSession.h"
#include "runtime/Sharding.h"
#include "runtime/io/HfWeights.h"

namespace llmc::rt {

Status DeviceSession::setArgumentConverting(const std::string &name,
                                            DType dtype, const Shape &shape,
                                            const void *data, size_t bytes,
                                            ThreadPool *pool) {
  const Executable &exe = executable();
  int index = exe.findArgument(name);
  LLMC_RETURN_IF_ERROR(checkArgumentFound(name, index));
  DType target = exe.ranks.front().values[exe.arguments[index].value].dtype;
  if (target == dtype)
    return setArgument(name, dtype, shape, data, bytes);
  int64_t count = numElements(shape);
  if (bytes != static_cast<size_t>(count) * dtypeSize(dtype))
    return Status::error(StatusCode::InvalidArgument,
                         "argument '" + name + "' from " + dtypeName(dtype) +
                             formatShape(shape) + " needs " +
                             std::to_string(count * dtypeSize(dtype)) +
                             " bytes, got " + std::to_string(bytes));
  std::vector<uint8_t> converted(static_cast<size_t>(count) *
                                 dtypeSize(target));
  Status status =
      convertElements(dtype, data, target, converted.data(), count, pool);
  if (!status)
    return Status::error(status.code(),
                         "argument '" + name + "': " + status.message());
  return setArgument(name, target, shape, converted.data(), converted.size());
}

Status DeviceSession::zeroArgument(const std::string &name) {
  const Executable &exe = executable();
  for (size_t i = 0; i < exe.arguments.size(); ++i) {
    if (exe.arguments[i].name != name)
      continue;
    const ValueInfo &value = exe.ranks.front().values[exe.arguments[i].value];
    Shape shape;
    LLMC_RETURN_IF_ERROR(argumentGlobalShape(exe, i, shape));
    std::vector<uint8_t> zeros(
        static_cast<size_t>(numElements(shape)) * dtypeSize(value.dtype), 0);
    return setArgument(name, value.dtype, shape, zeros.data(), zeros.size());
  }
  return checkArgumentFound(name, -1);
}

double scalarAsDouble(const TensorRef &tensor) {
  switch (tensor.dtype) {
  case DType::F64:
    return *static_cast<const double *>(tensor.data);
  case DType::BF16:
    return bf16ToFloat(*static_cast<const uint16_t *>(tensor.data));
  case DType::F16:
    return f16ToFloat(*static_cast<const uint16_t *>(tensor.data));
  default:
    return *static_cast<const float *>(tensor.data);
  }
}

std::vector<int> DeviceSession::localRanks() const {
  std::vector<int> ranks(executable().ranks.size());
  for (size_t r = 0; r < ranks.size(); ++r)
    ranks[r] = static_cast<int>(r);
  return ranks;
}

Status checkBinding(const std::string &name, const TensorRef &target,
                    DType dtype, const Shape &shape, size_t bytes) {
  if (dtype != target.dtype || shape != target.shape)
    return Status::error(StatusCode::InvalidArgument,
                         "argument '" + name + "' is " +
                             dtypeName(target.dtype) +
                             formatShape(target.shape) + ", got " +
                             dtypeName(dtype) + formatShape(shape));
  if (bytes != target.bytes())
    return Status::error(StatusCode::InvalidArgument,
                         "argument '" + name + "' needs " +
                             std::to_string(target.bytes()) + " bytes, got " +
                             std::to_string(bytes));
  return Status::ok();
}

Status checkArgumentFound(const std::string &name, int index) {
  if (index >= 0)
    return Status::ok();
  return Status::error(StatusCode::NotFound,
                       "the program has no argument '" + name + "'");
}

Status checkAllBound(const Executable &executable,
                     const std::vector<bool> &bound) {
  std::string missing;
  size_t count = 0;
  for (size_t i = 0; i < bound.size(); ++i)
    if (!bound[i] && count++ < 5)
      missing += (missing.empty() ? "" : ", ") + executable.arguments[i].name;
  if (!count)
    return Status::ok();
  return Status::error(StatusCode::InvalidArgument,
                       std::to_string(count) +
                           " argument(s) were never bound: " + missing +
                           (count > 5 ? ", ..." : ""));
}

int stageHolder(const Executable &executable, int32_t stage, int rank) {
  if (stage < 0)
    return rank;
  // Row-major over the mesh axes (last fastest): replace the pp coordinate.
  int stride = 1;
  for (size_t a = executable.mesh.size(); a-- > 0;) {
    const MeshAxisInfo &axis = executable.mesh[a];
    if (axis.name == "pp") {
      int coordinate = (rank / stride) % axis.size;
      return rank + (stage - coordinate) * stride;
    }
    stride *= axis.size;
  }
  return rank;
}

int outputHolder(const Executable &executable, size_t index, int rank) {
  const OutputInfo &out = executable.outputs[index];
  for (int32_t replica : out.replicaStages)
    if (stageHolder(executable, replica, rank) == rank)
      return rank;
  return stageHolder(executable, out.pipelineStage, rank);
}

bool bindsArgument(const Executable &executable, size_t index, int rank) {
  return stageHolder(executable, executable.arguments[index].pipelineStage,
                     rank) == rank;
}

} // namespace llmc::rt
