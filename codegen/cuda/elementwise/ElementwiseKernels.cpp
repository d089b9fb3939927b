//===- ElementwiseKernels.cpp - CUDA C++ for the elementwise kernels ------===//
//
// The generator writes, per signature: the bf16 helpers (when a bf16
// operand exists), `llmc_op` (the scalar math on compute values, one
// statement per line), and the two entry points. The math of each kind is
// its line of the CUDA kernel table (CudaKernels.def); compare's and
// gelu's, which depend on an attribute, and the integer forms are written
// here.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/elementwise/ElementwiseKernels.h"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace llmc::rt::cuda {

namespace {

const char *kCompareNames[] = {"eq", "ne", "lt", "le", "gt", "ge"};
const char *kCompareOperators[] = {"==", "!=", "<", "<=", ">", ">="};

/// The row of `kind` in CudaKernels.def's LLMC_CUDA_ELEMENTWISE lines, or
/// null.
struct ElementwiseRow {
  KernelKind kind;
  const char *operands; ///< "lhs, rhs"
  const char *body;     ///< "" when written from the attributes
};
const ElementwiseRow *elementwiseRow(KernelKind kind) {
  static const ElementwiseRow rows[] = {
#define LLMC_CUDA_ELEMENTWISE(Kind, Operands, Body)                            \
  {KernelKind::Kind, Operands, Body},
#include "runtime/cuda/kernels/CudaKernels.def"
  };
  for (const ElementwiseRow &row : rows)
    if (row.kind == kind)
      return &row;
  return nullptr;
}

/// Operand names of each kind, in Kernels.def's operand order (the table's
/// Operands column).
std::vector<std::string> operandNames(KernelKind kind) {
  std::vector<std::string> names;
  const ElementwiseRow *row = elementwiseRow(kind);
  std::string list = row ? row->operands : "x";
  for (size_t start = 0; start <= list.size();) {
    size_t end = list.find(',', start);
    if (end == std::string::npos)
      end = list.size();
    std::string name = list.substr(start, end - start);
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    names.push_back(name);
    start = end + 1;
  }
  return names;
}

/// The body of llmc_op: statements on the compute values named by
/// operandNames, ending in `return`.
bool isInteger(DType dtype) {
  return dtype == DType::I32 || dtype == DType::I64;
}

/// The body of llmc_op on i32/i64 values, which wraps on overflow as the
/// CPU's (two's complement, computed unsigned: signed overflow is
/// undefined in C++).
std::string integerBody(const ElementwiseSignature &sig) {
  std::string t = sig.result == DType::I32 ? "int" : "long long";
  std::string u = "unsigned " + t;
  auto wrap = [&](const std::string &a, const std::string &op,
                  const std::string &b) {
    return "(" + t + ")((" + u + ")" + a + " " + op + " (" + u + ")" + b + ")";
  };
  switch (sig.kind) {
  case KernelKind::Neg:
    return "  return " + wrap("0", "-", "x") + ";\n";
  case KernelKind::Abs:
    return "  return x < 0 ? " + wrap("0", "-", "x") + " : x;\n";
  case KernelKind::Add:
    return "  return " + wrap("lhs", "+", "rhs") + ";\n";
  case KernelKind::Sub:
    return "  return " + wrap("lhs", "-", "rhs") + ";\n";
  case KernelKind::Mul:
    return "  return " + wrap("lhs", "*", "rhs") + ";\n";
  case KernelKind::Max:
    return "  return lhs >= rhs ? lhs : rhs;\n";
  case KernelKind::Min:
    return "  return lhs <= rhs ? lhs : rhs;\n";
  default:
    return "";
  }
}

/// The table's body of a kind, each statement on its own indented line.
std::string tableBody(const char *body) {
  std::string text, line;
  for (const char *c = body;; ++c) {
    if (*c == '\n' || *c == '\0') {
      text += "  " + line + "\n";
      line.clear();
      if (*c == '\0')
        break;
      continue;
    }
    line += *c;
  }
  return text;
}

/// The body of llmc_op: CudaKernels.def's, or for the kinds whose math is
/// an attribute's, written from it here.
std::string opBody(const ElementwiseSignature &sig) {
  if (isInteger(sig.result))
    return integerBody(sig);
  switch (sig.kind) {
  case KernelKind::Compare:
    return std::string("  return lhs ") + kCompareOperators[sig.ints[0]] +
           " rhs;\n";
  case KernelKind::Gelu:
    if (sig.ints[0] == 0)
      // 0.5 x (1 + tanh u) = x sigmoid(2u) = x / (1 + exp(-2u)).
      return "  const float kSqrt2OverPi = 0.79788456080286535588f;\n"
             "  float cube = x * x * x;\n"
             "  float inner = kSqrt2OverPi * (x + 0.044715f * cube);\n"
             "  return x / (1.0f + expf(-2.0f * inner));\n";
    // 0.5 x erfc(-x / sqrt 2): no cancellation to 0 for x << 0.
    return "  const float kInvSqrt2 = 0.70710678118654752440f;\n"
           "  return 0.5f * x * erfcf(-x * kInvSqrt2);\n";
  default:
    break;
  }
  const ElementwiseRow *row = elementwiseRow(sig.kind);
  return row && *row->body ? tableBody(row->body) : "";
}

const char *storageType(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "float";
  case DType::BF16:
  case DType::F16:
    return "unsigned short";
  case DType::I32:
    return "int";
  case DType::I64:
    return "long long";
  default:
    return "unsigned char"; // i1
  }
}

/// The unsigned type of `bytes` bytes, for vector loads and stores.
const char *rawType(int bytes) {
  switch (bytes) {
  case 16:
    return "uint4";
  case 8:
    return "uint2";
  case 4:
    return "unsigned int";
  case 2:
    return "unsigned short";
  default:
    return "unsigned char";
  }
}

/// Whether llmc_op sees storage values (select) or compute values.
bool onStorage(KernelKind kind) { return kind == KernelKind::Select; }

std::string computeType(KernelKind kind, DType dtype) {
  if (onStorage(kind) || isInteger(dtype))
    return storageType(dtype);
  return dtype == DType::I1 ? "bool" : "float";
}

/// The expression converting storage `value` of `dtype` to compute.
std::string load(KernelKind kind, DType dtype, const std::string &value) {
  if (onStorage(kind) || dtype == DType::F32 || isInteger(dtype))
    return value;
  if (dtype == DType::BF16)
    return "llmc_bf16_to_float(" + value + ")";
  if (dtype == DType::F16)
    return "llmc_f16_to_float(" + value + ")";
  return "(" + value + " != 0)";
}

std::string store(KernelKind kind, DType dtype, const std::string &value) {
  if (onStorage(kind) || dtype == DType::F32 || isInteger(dtype))
    return value;
  if (dtype == DType::BF16)
    return "llmc_float_to_bf16(" + value + ")";
  if (dtype == DType::F16)
    return "llmc_float_to_f16(" + value + ")";
  return "(unsigned char)(" + value + ")";
}

std::string lower(std::string text) {
  for (char &c : text)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

Status unsupported(const ElementwiseSignature &sig, const std::string &why) {
  return Status::error(StatusCode::Unimplemented,
                       "no CUDA elementwise kernel for " + describe(sig) +
                           ": " + why);
}

/// Checks arity, dtypes and attributes against what the generator covers.
Status checkSignature(const ElementwiseSignature &sig) {
  if (!isCudaElementwiseKernel(sig.kind))
    return unsupported(sig, "not an elementwise kernel");
  size_t arity = operandNames(sig.kind).size();
  if (sig.inputs.size() != arity)
    return unsupported(sig, "expected " + std::to_string(arity) +
                                " inputs, got " +
                                std::to_string(sig.inputs.size()));
  auto isFloat = [](DType d) {
    return d == DType::F32 || d == DType::BF16 || d == DType::F16;
  };
  size_t numInts =
      sig.kind == KernelKind::Compare || sig.kind == KernelKind::Gelu;
  if (sig.ints.size() != numInts)
    return unsupported(sig, "expected " + std::to_string(numInts) +
                                " integer attributes");
  if (sig.kind == KernelKind::Compare && (sig.ints[0] < 0 || sig.ints[0] > 5))
    return unsupported(sig, "expected direction in [0, 5]");
  if (sig.kind == KernelKind::Gelu && sig.ints[0] != 0 && sig.ints[0] != 1)
    return unsupported(sig, "expected approximation 0 (tanh) or 1 (erf)");
  size_t firstValue = sig.kind == KernelKind::Select ? 1 : 0;
  if (firstValue == 1 && sig.inputs[0] != DType::I1)
    return unsupported(sig, "expected an i1 condition");
  for (size_t i = firstValue; i < sig.inputs.size(); ++i) {
    // A mask as numbers (1.0 or 0.0): the MoE router's expert counts.
    if (sig.kind == KernelKind::Cast && sig.inputs[i] == DType::I1)
      continue;
    // Integer arithmetic wraps (integerBody); an integer compare is exact.
    // (A stand-alone integer compare runs the device unit's kernel,
    // ElementwiseLaunch.cpp; this one serves fused regions: the one-hot of
    // the loss gradient compares an iota with the labels.)
    if (isInteger(sig.inputs[i]) &&
        (!integerBody(sig).empty() || sig.kind == KernelKind::Compare) &&
        sig.inputs[i] == sig.inputs[firstValue])
      continue;
    if (!isFloat(sig.inputs[i]))
      return unsupported(sig, isInteger(sig.inputs[i])
                                  ? "i32 and i64 cover neg, abs, add, sub, "
                                    "mul, max, min and compare"
                                  : "only f32, bf16, f16 (and i32, i64 for "
                                    "integer arithmetic) are generated so far");
    if (sig.kind != KernelKind::Cast && sig.inputs[i] != sig.inputs[firstValue])
      return unsupported(sig, "expected operands of one type");
  }
  DType expected = sig.kind == KernelKind::Compare ? DType::I1
                   : sig.kind == KernelKind::Cast  ? sig.result
                                                   : sig.inputs[firstValue];
  if (sig.result != expected ||
      (sig.kind == KernelKind::Cast && !isFloat(sig.result)))
    return unsupported(sig, "unexpected result type");
  return Status::ok();
}

const char *kHalfHelpers =
    R"(// bf16 is stored as its 16 high bits: widening is exact, narrowing rounds to
// nearest even and keeps NaN a quiet NaN (the CPU's floatToBf16).
__device__ __forceinline__ float llmc_bf16_to_float(unsigned short bits) {
  return __uint_as_float(((unsigned int)bits) << 16);
}

__device__ __forceinline__ unsigned short llmc_float_to_bf16(float value) {
  unsigned int word = __float_as_uint(value);
  if ((word & 0x7fffffffu) > 0x7f800000u)
    return (unsigned short)((word >> 16) | 0x40u);
  unsigned int rounding = 0x7fffu + ((word >> 16) & 1u);
  return (unsigned short)((word + rounding) >> 16);
}

// f16 (IEEE binary16) as its bits, the CPU's f16ToFloat and floatToF16:
// widening is exact (subnormals too), narrowing rounds to nearest even,
// sends 65520 and beyond to infinity and NaN to 0x7e00 with its sign. The
// hardware's cvt does the numbers (as common/Prelude.cuh's F16), a select
// the NaNs the host treats its own way.
__device__ __forceinline__ float llmc_f16_to_float(unsigned short bits) {
  float widened;
  asm("cvt.f32.f16 %0, %1;" : "=f"(widened) : "h"(bits));
  unsigned int sign = ((unsigned int)bits & 0x8000u) << 16;
  unsigned int mantissa = (unsigned int)bits & 0x3ffu;
  return ((bits >> 10) & 0x1fu) == 0x1fu && mantissa != 0
             ? __uint_as_float(sign | 0x7f800000u | (mantissa << 13))
             : widened;
}

__device__ __forceinline__ unsigned short llmc_float_to_f16(float value) {
  unsigned int word = __float_as_uint(value);
  unsigned short narrowed;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(narrowed) : "f"(value));
  return (word & 0x7fffffffu) > 0x7f800000u
             ? (unsigned short)(((word >> 16) & 0x8000u) | 0x7e00u)
             : narrowed;
}

)";

} // namespace

bool isCudaElementwiseKernel(KernelKind kind) {
  return elementwiseRow(kind) != nullptr;
}

Status elementwiseFunction(const ElementwiseSignature &sig,
                           const std::string &name, std::string &code) {
  LLMC_RETURN_IF_ERROR(checkSignature(sig));
  const std::vector<std::string> names = operandNames(sig.kind);
  std::ostringstream s;
  s << "// " << describe(sig) << "\n"
    << "__device__ __forceinline__ " << computeType(sig.kind, sig.result) << " "
    << name << "(";
  for (size_t i = 0; i < names.size(); ++i)
    s << (i ? ", " : "") << computeType(sig.kind, sig.inputs[i]) << " "
      << names[i];
  s << ") {\n" << opBody(sig) << "}\n";
  code = s.str();
  return Status::ok();
}

const char *elementwiseStorageType(DType dtype) { return storageType(dtype); }

std::string elementwiseLoad(const ElementwiseSignature &sig, size_t operand,
                            const std::string &value) {
  return load(sig.kind, sig.inputs[operand], value);
}

std::string elementwiseStore(const ElementwiseSignature &sig,
                             const std::string &value) {
  return store(sig.kind, sig.result, value);
}

const char *elementwiseHalfHelpers() { return kHalfHelpers; }

std::string describe(const ElementwiseSignature &sig) {
  std::string text = kernelName(sig.kind);
  if (sig.kind == KernelKind::Compare && sig.ints.size() == 1 &&
      sig.ints[0] >= 0 && sig.ints[0] <= 5)
    text += std::string("[") + kCompareNames[sig.ints[0]] + "]";
  if (sig.kind == KernelKind::Gelu && sig.ints.size() == 1)
    text += sig.ints[0] == 0 ? "[tanh]" : "[erf]";
  text += "(";
  for (size_t i = 0; i < sig.inputs.size(); ++i)
    text += (i ? ", " : "") + std::string(dtypeName(sig.inputs[i]));
  return text + ") -> " + dtypeName(sig.result);
}

Status generateElementwiseKernel(const ElementwiseSignature &sig,
                                 ElementwiseSource &out) {
  LLMC_RETURN_IF_ERROR(checkSignature(sig));
  out = ElementwiseSource();
  const std::vector<std::string> names = operandNames(sig.kind);
  std::vector<DType> types = sig.inputs;
  types.push_back(sig.result);
  int widest = 1;
  for (DType t : types) {
    out.elementBytes.push_back(static_cast<int>(dtypeSize(t)));
    widest = std::max(widest, static_cast<int>(dtypeSize(t)));
  }
  out.vectorWidth = 16 / widest;

  // 1. The entry name: llmc_<kind>[_<attr>]_<dtypes>.
  std::string entry = "llmc_" + lower(kernelName(sig.kind));
  if (sig.kind == KernelKind::Compare)
    entry += std::string("_") + kCompareNames[sig.ints[0]];
  if (sig.kind == KernelKind::Gelu)
    entry += sig.ints[0] == 0 ? "_tanh" : "_erf";
  entry += std::string("_") + dtypeName(sig.inputs.back());
  if (sig.kind == KernelKind::Cast)
    entry += std::string("_to_") + dtypeName(sig.result);
  out.entry = entry;

  std::ostringstream s;
  s << "// " << describe(sig) << "\n"
    << "// Generated by llmc (codegen/cuda/elementwise/ElementwiseKernels.cpp).\n\n";
  bool anyHalf =
      std::find(types.begin(), types.end(), DType::BF16) != types.end() ||
      std::find(types.begin(), types.end(), DType::F16) != types.end();
  if (anyHalf && !onStorage(sig.kind))
    s << kHalfHelpers;

  // 2. The scalar math.
  s << "__device__ __forceinline__ " << computeType(sig.kind, sig.result)
    << " llmc_op(";
  for (size_t i = 0; i < names.size(); ++i)
    s << (i ? ", " : "") << computeType(sig.kind, sig.inputs[i]) << " "
      << names[i];
  s << ") {\n" << opBody(sig) << "}\n\n";

  // 3. One element: load each operand, apply, store.
  s << "__device__ __forceinline__ void llmc_element(";
  for (size_t i = 0; i < names.size(); ++i)
    s << "const " << storageType(sig.inputs[i]) << " *__restrict__ " << names[i]
      << ", ";
  s << storageType(sig.result) << " *__restrict__ result, long long i) {\n";
  for (size_t i = 0; i < names.size(); ++i)
    s << "  " << computeType(sig.kind, sig.inputs[i]) << " " << names[i]
      << "Value = " << load(sig.kind, sig.inputs[i], names[i] + "[i]") << ";\n";
  s << "  " << computeType(sig.kind, sig.result) << " value = llmc_op(";
  for (size_t i = 0; i < names.size(); ++i)
    s << (i ? ", " : "") << names[i] << "Value";
  s << ");\n"
    << "  result[i] = " << store(sig.kind, sig.result, "value") << ";\n"
    << "}\n\n";

  auto parameters = [&]() {
    std::ostringstream p;
    for (size_t i = 0; i < names.size(); ++i)
      p << "    const " << storageType(sig.inputs[i]) << " *__restrict__ "
        << names[i] << ",\n";
    p << "    " << storageType(sig.result) << " *__restrict__ result,\n"
      << "    long long n)";
    return p.str();
  };
  std::string allOperands;
  for (const std::string &name : names)
    allOperands += name + ", ";
  allOperands += "result";

  // 4. The scalar entry.
  s << "extern \"C\" __global__ void " << entry << "(\n"
    << parameters() << " {\n"
    << "  long long stride = (long long)gridDim.x * blockDim.x;\n"
    << "  long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    << "  for (long long i = first; i < n; i += stride)\n"
    << "    llmc_element(" << allOperands << ", i);\n"
    << "}\n\n";

  // 5. The vector entry: each operand moves vectorWidth elements as one
  // raw load or store of vectorWidth * its size bytes (16 for the widest).
  const int width = out.vectorWidth;
  s << "// " << width << " elements per iteration; pointers aligned to "
    << width << " elements.\n"
    << "extern \"C\" __global__ void " << entry << "_vec(\n"
    << parameters() << " {\n"
    << "  const int kWidth = " << width << ";\n"
    << "  long long vectors = n / kWidth;\n"
    << "  long long stride = (long long)gridDim.x * blockDim.x;\n"
    << "  long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    << "  for (long long v = first; v < vectors; v += stride) {\n";
  for (size_t i = 0; i < names.size(); ++i) {
    int bytes = width * out.elementBytes[i];
    s << "    alignas(16) " << storageType(sig.inputs[i]) << " " << names[i]
      << "Elems[kWidth];\n"
      << "    *reinterpret_cast<" << rawType(bytes) << " *>(" << names[i]
      << "Elems) = reinterpret_cast<const " << rawType(bytes) << " *>("
      << names[i] << ")[v];\n";
  }
  int resultBytes = width * out.elementBytes.back();
  s << "    alignas(16) " << storageType(sig.result)
    << " resultElems[kWidth];\n"
    << "#pragma unroll\n"
    << "    for (int j = 0; j < kWidth; ++j)\n"
    << "      llmc_element(";
  for (const std::string &name : names)
    s << name << "Elems, ";
  s << "resultElems, j);\n"
    << "    reinterpret_cast<" << rawType(resultBytes) << " *>(result)[v] = "
    << "*reinterpret_cast<const " << rawType(resultBytes)
    << " *>(resultElems);\n"
    << "  }\n"
    << "  // The tail shorter than a vector, one element per thread.\n"
    << "  long long i = vectors * kWidth + first;\n"
    << "  if (i < n)\n"
    << "    llmc_element(" << allOperands << ", i);\n"
    << "}\n";
  out.source = s.str();
  return Status::ok();
}

std::vector<ElementwiseSignature> allElementwiseSignatures() {
  const DType kFloats[] = {DType::F32, DType::BF16, DType::F16};
  std::vector<ElementwiseSignature> all;
  for (DType t : kFloats) {
    // Every kind of the table with a body of its own on values of one type,
    // by arity; then those written from their attributes, select and cast.
    for (size_t arity : {1, 2}) {
#define LLMC_CUDA_ELEMENTWISE(Kind, Operands, Body)                            \
  if (KernelKind::Kind != KernelKind::Cast &&                                  \
      KernelKind::Kind != KernelKind::Select && *Body &&                       \
      operandNames(KernelKind::Kind).size() == arity)                          \
    all.push_back({KernelKind::Kind, std::vector<DType>(arity, t), t, {}});
#include "runtime/cuda/kernels/CudaKernels.def"
    }
    for (int64_t direction = 0; direction < 6; ++direction)
      all.push_back({KernelKind::Compare, {t, t}, DType::I1, {direction}});
    all.push_back({KernelKind::Select, {DType::I1, t, t}, t, {}});
    for (int64_t approximation = 0; approximation < 2; ++approximation)
      all.push_back({KernelKind::Gelu, {t}, t, {approximation}});
    for (DType to : kFloats)
      all.push_back({KernelKind::Cast, {t}, to, {}});
    all.push_back({KernelKind::Cast, {DType::I1}, t, {}});
  }
  // Integer arithmetic (index computations: rope's backward negates its
  // positions).
  for (DType t : {DType::I32, DType::I64}) {
    for (KernelKind kind : {KernelKind::Neg, KernelKind::Abs})
      all.push_back({kind, {t}, t, {}});
    for (KernelKind kind : {KernelKind::Add, KernelKind::Sub, KernelKind::Mul,
                            KernelKind::Max, KernelKind::Min})
      all.push_back({kind, {t, t}, t, {}});
  }
  return all;
}

} // namespace llmc::rt::cuda
