//===- FlashLayout.cuh - where flash attention's operands lie -------------===//
//
// The strides of q, k, v and the query-side result as the kernels take them
// (one FlashLayout parameter, the launcher's FlashOperands byte for byte),
// the rows of a head, and the grouped-query head mapping; shared by the
// scalar (Flash.cuh) and tensor-core (FlashTc.cuh) kernels and by their CPU
// emulation.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CUDA_ATTENTION_FLASHLAYOUT_CUH
#define LLMC_CUDA_ATTENTION_FLASHLAYOUT_CUH

__device__ __forceinline__ float flashNegativeInfinity() {
  return -__int_as_float(0x7f800000);
}

// Where a block's (batch, head) lives: the query head `head` = b * heads + h
// reads key/value head b * kvHeads + h / group.
__device__ __forceinline__ long long kvHeadOf(long long head, int heads,
                                              int kvHeads) {
  long long b = head / heads;
  int h = (int)(head % heads);
  return b * kvHeads + h / (heads / kvHeads);
}

// Where an operand's rows lie (runtime/AttentionLayout.h): the row of
// (batch b, head h, position t) starts at element
// offset + b * batch + h * head + t * row; its D elements are contiguous.
struct FlashStrides {
  long long offset, batch, head, row;
};
// The strides of q (and dq), k (dk), v (dv) and the query-side result o
// (out, dout): one kernel parameter, the same bytes as the launcher's
// FlashOperands.
struct FlashLayout {
  FlashStrides q, k, v, o;
};
// Row 0 of head `head` = b * heads + h (a query head, or a key/value head
// with heads = kvHeads).
__device__ __forceinline__ long long flashHeadAt(FlashStrides s,
                                                 long long head, int heads) {
  return s.offset + (head / heads) * s.batch + (head % heads) * s.head;
}
// Row t of head `head`.
__device__ __forceinline__ long long flashRowAt(FlashStrides s, long long head,
                                                int heads, long long t) {
  return flashHeadAt(s, head, heads) + t * s.row;
}

#endif // LLMC_CUDA_ATTENTION_FLASHLAYOUT_CUH
