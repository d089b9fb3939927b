//===- FlashTcPtx.cuh - the tensor-core kernels' inline PTX ---------------===//
//
// Every function of the tensor-core flash attention made of inline PTX
// (mma.sync, ldmatrix, cp.async, cvt to bf16x2, the dynamic shared memory
// size) and the dynamic shared memory itself, apart so that the CPU emulation
// (test/runtime/cuda/FlashTensorCoreEmulationTest.cpp) defines this header's
// guard and puts its emulations of them in its place. sm_80 and later; other
// architectures compile a trap, and the launcher never selects them there.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CUDA_ATTENTION_FLASHTCPTX_CUH
#define LLMC_CUDA_ATTENTION_FLASHTCPTX_CUH

#if __CUDA_ARCH__ >= 800
#define LLMC_FLASH_TC_AVAILABLE 1
#else
#define LLMC_FLASH_TC_AVAILABLE 0
#endif

// The dynamic shared memory of the three kernels (one block runs one).
extern __shared__ __align__(16) unsigned char llmcFlashTcShared[];

// Traps unless the launch gave the block `bytes` of dynamic shared memory.
__device__ __forceinline__ void expectFlashTcShared(unsigned bytes) {
  unsigned size = 0;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(size));
  if (size < bytes)
    __trap();
}

// Two f32 rounded to nearest even into one bf16 pair, `lo` in the low half
// (the element at the lower address or column).
__device__ __forceinline__ unsigned packBf16(float lo, float hi) {
  unsigned result = 0;
#if LLMC_FLASH_TC_AVAILABLE
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(result) : "f"(hi), "f"(lo));
#endif
  return result;
}

// c += a b for a 16x16 bf16 A (row major), a 16x8 bf16 B (column major)
// and a 16x8 f32 C. Fragments (g = lane / 4, t = lane % 4):
//   a[0] = A[g][2t..2t+1],   a[1] = A[g+8][2t..2t+1],
//   a[2] = A[g][2t+8..2t+9], a[3] = A[g+8][2t+8..2t+9];
//   b0 = B[2t..2t+1][g],     b1 = B[2t+8..2t+9][g];
//   c[0..1] = C[g][2t..2t+1], c[2..3] = C[g+8][2t..2t+1].
__device__ __forceinline__ void mmaBf16(float c[4], const unsigned a[4],
                                        unsigned b0, unsigned b1) {
#if LLMC_FLASH_TC_AVAILABLE
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
  __trap();
#endif
}

// The shared-memory address of a generic pointer into shared memory.
__device__ __forceinline__ unsigned sharedAddress(const void *pointer) {
  unsigned long long address = 0;
  asm("cvta.to.shared.u64 %0, %1;" : "=l"(address) : "l"(pointer));
  return (unsigned)address;
}

// Four 8x8 bf16 matrices from shared memory (ldmatrix.x4): lane l gives the
// address of row l % 8 of matrix l / 8 (16 contiguous bytes); register i
// receives matrix i, lane l holding row l / 4, columns 2 (l % 4) and
// 2 (l % 4) + 1 (the lower column in the low half). Transposed: lane l holds
// column l / 4, rows 2 (l % 4) and 2 (l % 4) + 1.
__device__ __forceinline__ void loadMatrices(unsigned r[4],
                                             const unsigned short *row) {
#if LLMC_FLASH_TC_AVAILABLE
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, "
               "[%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(sharedAddress(row)));
#else
  r[0] = r[1] = r[2] = r[3] = 0u;
#endif
}
__device__ __forceinline__ void loadMatricesTransposed(unsigned r[4],
                                                       const unsigned short *row) {
#if LLMC_FLASH_TC_AVAILABLE
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 "
               "{%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(sharedAddress(row)));
#else
  r[0] = r[1] = r[2] = r[3] = 0u;
#endif
}

// cp.async (sm_80): `bytes` (4 or 16) from global to shared memory without
// a trip through registers; `valid` false writes zeros and reads nothing.
// The copies a thread issues land after commitAsync() and waitAsync<0>();
// the other threads see them after the barrier that follows.
__device__ __forceinline__ void copyAsync16(void *destination,
                                            const void *source, bool valid) {
#if LLMC_FLASH_TC_AVAILABLE
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;"
               :
               : "r"(sharedAddress(destination)), "l"(source),
                 "r"(valid ? 16 : 0)
               : "memory");
#else
  *(uint4 *)destination =
      valid ? *(const uint4 *)source : make_uint4(0u, 0u, 0u, 0u);
#endif
}
__device__ __forceinline__ void copyAsync4(float *destination,
                                           const float *source, bool valid) {
#if LLMC_FLASH_TC_AVAILABLE
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;"
               :
               : "r"(sharedAddress(destination)), "l"(source),
                 "r"(valid ? 4 : 0)
               : "memory");
#else
  *destination = valid ? *source : 0.0f;
#endif
}
__device__ __forceinline__ void commitAsync() {
#if LLMC_FLASH_TC_AVAILABLE
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
// Waits for this thread's copies (all of them: every loop below keeps at
// most one group in flight while it multiplies).
__device__ __forceinline__ void waitAsync() {
#if LLMC_FLASH_TC_AVAILABLE
  asm volatile("cp.async.wait_group 0;" ::: "memory");
#endif
}

#endif // LLMC_CUDA_ATTENTION_FLASHTCPTX_CUH
