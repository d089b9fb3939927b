//===- LrSchedule.cuh - the learning rate of a step -----------------------===//
//
// llmc_lr_schedule_<f32|bf16>: warmup, then cosine, linear or constant
// decay, in double as the CPU (runtime/cpu/Optimizer.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CUDA_OPTIMIZER_LRSCHEDULE_CUH
#define LLMC_CUDA_OPTIMIZER_LRSCHEDULE_CUH

#include "common/Prelude.cuh"

// The learning rate at step t (a scalar): linear warmup to peak, then
// cosine (0), linear (1) or constant (2) decay to min at `total`; in double
// as the CPU.
template <typename T>
__device__ void lrSchedule(const T *step, T *out, int kind, long long warmup,
                           long long total, double peak, double minimum) {
  double t = (double)loadValue(step[0]);
  double rate;
  if (warmup > 0 && t <= (double)warmup) {
    rate = peak * t / (double)warmup;
  } else {
    double progress = (t - (double)warmup) / (double)(total - warmup);
    progress = fmin(fmax(progress, 0.0), 1.0);
    if (kind == 0)
      rate = minimum + (peak - minimum) * 0.5 *
                           (1.0 + cos(3.14159265358979323846 * progress));
    else if (kind == 1)
      rate = peak - (peak - minimum) * progress;
    else
      rate = peak;
  }
  out[0] = storeValue<T>(rate);
}
extern "C" __global__ void llmc_lr_schedule_f32(const float *step, float *out,
                                                int kind, long long warmup,
                                                long long total, double peak,
                                                double minimum) {
  lrSchedule(step, out, kind, warmup, total, peak, minimum);
}
extern "C" __global__ void llmc_lr_schedule_bf16(const Bf16 *step, Bf16 *out,
                                                 int kind, long long warmup,
                                                 long long total, double peak,
                                                 double minimum) {
  lrSchedule(step, out, kind, warmup, total, peak, minimum);
}
extern "C" __global__ void llmc_lr_schedule_f16(const F16 *step, F16 *out,
                                                int kind, long long warmup,
                                                long long total, double peak,
                                                double minimum) {
  lrSchedule(step, out, kind, warmup, total, peak, minimum);
}

#endif // LLMC_CUDA_OPTIMIZER_LRSCHEDULE_CUH
