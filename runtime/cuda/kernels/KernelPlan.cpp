//===- KernelPlan.cpp - a carried CUDA plan as the launchers see it -------===//
#include "runtime/cuda/kernels/KernelPlan.h"

namespace llmc::rt::cuda {

KernelChoice kernelChoice(const CudaCommandPlan &plan) {
  KernelChoice choice;
  choice.route = static_cast<KernelChoice::Route>(plan.route);
  const CudaElementwisePlan &e = plan.elementwise;
  choice.elementwise.kind = e.kind;
  choice.elementwise.inputs = e.inputs;
  choice.elementwise.result = e.result;
  choice.elementwise.ints = e.ints;
  choice.unit.entry = e.entry;
  choice.unit.vectorWidth = e.vectorWidth;
  choice.unit.elementBytes.assign(e.elementBytes.begin(), e.elementBytes.end());
  choice.entries = plan.entries;
  const CudaMatmulPlan &m = plan.matmul;
  choice.matmul.operands = m.operands;
  choice.matmul.result = m.result;
  choice.matmul.batch = m.batch;
  choice.matmul.m = m.m;
  choice.matmul.n = m.n;
  choice.matmul.k = m.k;
  choice.matmul.transA = m.transA;
  choice.matmul.transB = m.transB;
  choice.matmul.sharedRhs = m.sharedRhs;
  choice.matmul.hasEpilogue = m.hasEpilogue;
  choice.matmul.epilogue = m.epilogue;
  choice.scratchBytes = static_cast<size_t>(plan.scratchBytes);
  return choice;
}

CudaCommandPlan commandPlan(const KernelChoice &choice) {
  CudaCommandPlan plan;
  plan.route = static_cast<CudaRoute>(choice.route);
  CudaElementwisePlan &e = plan.elementwise;
  e.kind = choice.elementwise.kind;
  e.inputs = choice.elementwise.inputs;
  e.result = choice.elementwise.result;
  e.ints = choice.elementwise.ints;
  e.entry = choice.unit.entry;
  e.vectorWidth = choice.unit.vectorWidth;
  e.elementBytes.assign(choice.unit.elementBytes.begin(),
                        choice.unit.elementBytes.end());
  plan.entries = choice.entries;
  CudaMatmulPlan &m = plan.matmul;
  m.operands = choice.matmul.operands;
  m.result = choice.matmul.result;
  m.batch = choice.matmul.batch;
  m.m = choice.matmul.m;
  m.n = choice.matmul.n;
  m.k = choice.matmul.k;
  m.transA = choice.matmul.transA;
  m.transB = choice.matmul.transB;
  m.sharedRhs = choice.matmul.sharedRhs;
  m.hasEpilogue = choice.matmul.hasEpilogue;
  m.epilogue = choice.matmul.epilogue;
  plan.scratchBytes = choice.scratchBytes;
  return plan;
}

MultiTensorGroup multiTensorGroup(const CudaMultiTensorPlan &plan) {
  MultiTensorGroup group;
  group.kind = plan.kind == CudaMultiTensorPlan::Kind::SumSquares
                   ? MultiTensorGroup::Kind::SumSquares
                   : MultiTensorGroup::Kind::Elementwise;
  group.members.assign(plan.members.begin(), plan.members.end());
  group.ends.assign(plan.ends.begin(), plan.ends.end());
  group.inputs = plan.inputs;
  group.outputs = plan.outputs;
  group.elements = plan.elements;
  group.entry = plan.entry;
  group.label = plan.label;
  return group;
}

CudaMultiTensorPlan multiTensorPlan(const MultiTensorGroup &group) {
  CudaMultiTensorPlan plan;
  plan.kind = group.kind == MultiTensorGroup::Kind::SumSquares
                  ? CudaMultiTensorPlan::Kind::SumSquares
                  : CudaMultiTensorPlan::Kind::Elementwise;
  plan.members.assign(group.members.begin(), group.members.end());
  plan.ends.assign(group.ends.begin(), group.ends.end());
  plan.inputs = group.inputs;
  plan.outputs = group.outputs;
  plan.elements = group.elements;
  plan.entry = group.entry;
  plan.label = group.label;
  return plan;
}

} // namespace llmc::rt::cuda
