//===- Init.cpp - initial values of parameters and optimizer state --------===//
#include "runtime/train/Init.h"
#include "runtime/Sharding.h"

#include <cstring>
#include <random>

namespace llmc::rt {

Status initialArgumentBytes(const Executable &executable, size_t index,
                            uint64_t seed, std::vector<uint8_t> &bytes) {
  const ArgumentInfo &arg = executable.arguments.at(index);
  const ValueInfo &value = executable.ranks.front().values[arg.value];
  // The GLOBAL tensor, drawn in one sequence: a sharded program starts from
  // exactly the single-device program's values, then binding splits them.
  Shape shape;
  LLMC_RETURN_IF_ERROR(argumentGlobalShape(executable, index, shape));
  int64_t n = numElements(shape);
  bytes.assign(static_cast<size_t>(n) * dtypeSize(value.dtype), 0);
  // AdamW moments start at zero (all-zero bytes); state with a constant
  // initializer (the fp16 loss scale) starts at its value.
  if (arg.role == ArgumentRole::OptimizerState &&
      arg.init.kind != InitSpec::Kind::Constant)
    return Status::ok();
  if (!isFloat(value.dtype) || arg.init.kind == InitSpec::Kind::None)
    return Status::error(StatusCode::InvalidArgument,
                         "parameter '" + arg.name +
                             "' has no initializer; give its value in a "
                             "weights file");
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ull + index);
  std::normal_distribution<double> normal(0.0, arg.init.scale);
  std::uniform_real_distribution<double> uniform(-arg.init.scale,
                                                 arg.init.scale);
  for (int64_t i = 0; i < n; ++i) {
    double v = 0.0;
    switch (arg.init.kind) {
    case InitSpec::Kind::Normal:
      v = normal(rng);
      break;
    case InitSpec::Kind::Uniform:
      v = uniform(rng);
      break;
    case InitSpec::Kind::Ones:
      v = 1.0;
      break;
    case InitSpec::Kind::Constant:
      v = arg.init.scale;
      break;
    default:
      break;
    }
    switch (value.dtype) {
    case DType::F32: {
      float f = static_cast<float>(v);
      std::memcpy(bytes.data() + 4 * i, &f, 4);
      break;
    }
    case DType::F64:
      std::memcpy(bytes.data() + 8 * i, &v, 8);
      break;
    case DType::BF16: {
      uint16_t h = floatToBf16(static_cast<float>(v));
      std::memcpy(bytes.data() + 2 * i, &h, 2);
      break;
    }
    default: {
      uint16_t h = floatToF16(static_cast<float>(v));
      std::memcpy(bytes.data() + 2 * i, &h, 2);
    }
    }
  }
  return Status::ok();
}

} // namespace llmc::rt
