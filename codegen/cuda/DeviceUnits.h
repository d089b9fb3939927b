//===- DeviceUnits.h - NVRTC units of the hand-written kernels --*- C++ -*-===//
//
// Which units of hand-written kernels exist (their .cu files in units/,
// whose #includes say what each holds), under which names they are
// compiled, and which are compiled only on demand. The sources come from
// the embedded files (KernelSources.h).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CODEGEN_CUDA_DEVICEUNITS_H
#define LLMC_CODEGEN_CUDA_DEVICEUNITS_H

#include <string>
#include <vector>

namespace llmc::rt::cuda {

/// A unit of hand-written kernels: its name (without ".cu"), its file
/// under runtime/cuda/kernels/ and its expanded source.
struct DeviceUnit {
  std::string name;
  std::string source;
  /// Compiled and loaded only when a launch needs one of its entries (the
  /// tensor-core flash attention, which cuDNN replaces where it is loaded).
  bool onDemand = false;
  /// The entries of an on-demand unit.
  std::vector<std::string> entries;
  /// The oldest architecture the unit compiles for (major * 10 + minor),
  /// 0 for any: 80 for the tensor-core flash attention (bf16 mma.sync,
  /// ldmatrix, cp.async). Below it the unit is not compiled (llmc compile
  /// --cuda-arch, cuda-coverage --arch) and never loaded: the launch runs
  /// the scalar kernels there (LaunchContext::bf16TensorCores).
  int minArch = 0;
  /// Carried by every program with Collective commands, whatever its
  /// kernels choose (the virtual ranks' reductions, which no command
  /// selects: the session of virtual ranks launches them).
  bool forCollectives = false;
  /// units/<file>.cu.
  std::string file;
  /// Why the source could not be expanded (an embedded file missing: a
  /// broken build); empty when `source` is whole. Compiling the unit
  /// reports it instead of compiling.
  std::string error;
};

/// Every unit of hand-written kernels, compiled side by side:
/// llmc_device_kernels (units/DeviceKernels.cu), llmc_flash_attention,
/// llmc_norm_grad_rows, llmc_norm_rows8, llmc_rope and, on demand, llmc_fp8,
/// one unit per head dimension of the tensor-core flash attention
/// (llmc_flash_tc_d64, llmc_flash_tc_d128), the reductions of virtual
/// ranks (llmc_virtual_collectives), ring attention's position-masked
/// blocks (llmc_flash_block) and their tensor-core kernels per head
/// dimension (llmc_flash_block_tc_d64, llmc_flash_block_tc_d128). NVRTC
/// compiles a unit serially: the longest unit is the cold compile.
std::vector<DeviceUnit> deviceKernelUnits();

/// The source of llmc_device_kernels (units/DeviceKernels.cu expanded).
std::string deviceKernelUnit();

/// 75 for "sm_75", 90 for "sm_90a"; 0 when `arch` is not sm_<digits>.
int archNumber(const std::string &arch);

/// Whether the hand-written unit `name` compiles for `arch` (its minArch).
/// Units that are not hand-written (generated ones) compile for any.
bool unitCompilesFor(const std::string &name, const std::string &arch);

} // namespace llmc::rt::cuda

#endif // LLMC_CODEGEN_CUDA_DEVICEUNITS_H
