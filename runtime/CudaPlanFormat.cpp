//===- CudaPlanFormat.cpp - the CUDA kernel plan in the file format -------===//
//
// Part of a rank program in format 5 (docs/executable.md, "The CUDA kernel
// plan"): written after the commands, read with the bounds-checked Reader,
// and validated against its program so that the runtime can index by
// everything in it.
//
//===----------------------------------------------------------------------===//
#include "runtime/ExecutableIO.h"

namespace llmc::rt {

const CudaUnit *CudaPlan::unitDefining(const std::string &entry) const {
  for (const CudaUnit &unit : units)
    for (const std::string &defined : unit.entries)
      if (defined == entry)
        return &unit;
  return nullptr;
}

namespace format {

namespace {

void writeStrings(Writer &w, const std::vector<std::string> &strings) {
  w.pod<uint32_t>(static_cast<uint32_t>(strings.size()));
  for (const std::string &s : strings)
    w.str(s);
}

bool readStrings(Reader &r, std::vector<std::string> &strings,
                 const char *field) {
  uint32_t n;
  if (!r.count(n, 4, field))
    return false;
  strings.resize(n);
  for (std::string &s : strings)
    if (!r.str(s, field))
      return false;
  return true;
}

void writeSlotLists(Writer &w, const std::vector<std::vector<int32_t>> &lists) {
  w.pod<uint32_t>(static_cast<uint32_t>(lists.size()));
  for (const std::vector<int32_t> &list : lists)
    w.podVector<int32_t>(list);
}

bool readSlotLists(Reader &r, std::vector<std::vector<int32_t>> &lists,
                   const char *field) {
  uint32_t n;
  if (!r.count(n, 4, field))
    return false;
  lists.resize(n);
  for (std::vector<int32_t> &list : lists)
    if (!r.podVector(list, field))
      return false;
  return true;
}

void writeCommand(Writer &w, const CudaCommandPlan &c) {
  w.pod<uint8_t>(static_cast<uint8_t>(c.code));
  w.str(c.error);
  w.pod<uint8_t>(static_cast<uint8_t>(c.route));
  const CudaElementwisePlan &e = c.elementwise;
  w.pod<uint16_t>(static_cast<uint16_t>(e.kind));
  w.pod<uint32_t>(static_cast<uint32_t>(e.inputs.size()));
  for (DType dtype : e.inputs)
    w.pod<uint8_t>(static_cast<uint8_t>(dtype));
  w.pod<uint8_t>(static_cast<uint8_t>(e.result));
  w.podVector<int64_t>(e.ints);
  w.str(e.entry);
  w.pod<int32_t>(e.vectorWidth);
  w.podVector<int32_t>(e.elementBytes);
  writeStrings(w, c.entries);
  const CudaMatmulPlan &m = c.matmul;
  w.pod<uint8_t>(static_cast<uint8_t>(m.operands));
  w.pod<uint8_t>(static_cast<uint8_t>(m.result));
  for (int64_t size : {m.batch, m.m, m.n, m.k})
    w.pod<int64_t>(size);
  w.pod<uint8_t>(static_cast<uint8_t>((m.transA ? 1 : 0) | (m.transB ? 2 : 0) |
                                      (m.sharedRhs ? 4 : 0) |
                                      (m.hasEpilogue ? 8 : 0)));
  w.pod<uint8_t>(static_cast<uint8_t>(m.epilogue));
  w.pod<uint64_t>(c.scratchBytes);
}

bool readCommand(Reader &r, CudaCommandPlan &c) {
  uint8_t code = 0, route = 0, result = 0, operands = 0, flags = 0,
          epilogue = 0, mresult = 0;
  uint16_t kind = 0;
  uint32_t n = 0;
  CudaElementwisePlan &e = c.elementwise;
  CudaMatmulPlan &m = c.matmul;
  bool ok = r.pod(code, "a CUDA choice's status") &&
            r.str(c.error, "a CUDA choice's refusal") &&
            r.pod(route, "a CUDA choice's route") &&
            r.pod(kind, "an elementwise unit's kind") &&
            r.count(n, 1, "an elementwise unit's inputs");
  if (!ok)
    return false;
  e.inputs.resize(n);
  for (DType &dtype : e.inputs) {
    uint8_t byte = 0;
    if (!r.pod(byte, "an elementwise unit's input type"))
      return false;
    dtype = static_cast<DType>(byte);
  }
  ok = r.pod(result, "an elementwise unit's result type") &&
       r.podVector(e.ints, "an elementwise unit's attributes") &&
       r.str(e.entry, "an elementwise unit's entry") &&
       r.pod(e.vectorWidth, "an elementwise unit's vector width") &&
       r.podVector(e.elementBytes, "an elementwise unit's element sizes") &&
       readStrings(r, c.entries, "a CUDA choice's entries") &&
       r.pod(operands, "a GEMM's operand type") &&
       r.pod(mresult, "a GEMM's result type") &&
       r.pod(m.batch, "a GEMM's batch") && r.pod(m.m, "a GEMM's M") &&
       r.pod(m.n, "a GEMM's N") && r.pod(m.k, "a GEMM's K") &&
       r.pod(flags, "a GEMM's flags") && r.pod(epilogue, "a GEMM's epilogue") &&
       r.pod(c.scratchBytes, "a CUDA choice's scratch");
  if (!ok)
    return false;
  c.code = static_cast<StatusCode>(code);
  c.route = static_cast<CudaRoute>(route);
  e.kind = static_cast<KernelKind>(kind);
  e.result = static_cast<DType>(result);
  m.operands = static_cast<DType>(operands);
  m.result = static_cast<DType>(mresult);
  m.transA = flags & 1;
  m.transB = flags & 2;
  m.sharedRhs = flags & 4;
  m.hasEpilogue = flags & 8;
  m.epilogue = static_cast<MatmulEpilogueKind>(epilogue);
  return true;
}

bool knownDType(DType dtype) { return static_cast<int>(dtype) < kNumDTypes; }

} // namespace

void writeCudaPlan(Writer &w, const CudaPlan &plan) {
  w.pod<uint8_t>(plan.present ? 1 : 0);
  if (!plan.present)
    return;
  w.pod<uint32_t>(static_cast<uint32_t>(plan.commands.size()));
  for (const CudaCommandPlan &command : plan.commands)
    writeCommand(w, command);
  w.pod<uint32_t>(static_cast<uint32_t>(plan.fused.size()));
  for (const CudaFusedPlan &fused : plan.fused) {
    w.pod<int32_t>(fused.marker);
    w.str(fused.entry);
    w.pod<int64_t>(fused.elements);
    w.str(fused.unfused);
  }
  w.pod<uint32_t>(static_cast<uint32_t>(plan.multiTensor.size()));
  for (const CudaMultiTensorPlan &group : plan.multiTensor) {
    w.pod<uint8_t>(static_cast<uint8_t>(group.kind));
    w.podVector<int64_t>(group.members);
    w.podVector<int64_t>(group.ends);
    writeSlotLists(w, group.inputs);
    writeSlotLists(w, group.outputs);
    w.podVector<int64_t>(group.elements);
    w.str(group.entry);
    w.str(group.label);
  }
  w.pod<uint32_t>(static_cast<uint32_t>(plan.units.size()));
  for (const CudaUnit &unit : plan.units) {
    w.str(unit.name);
    w.str(unit.source);
    writeStrings(w, unit.entries);
    w.pod<uint8_t>(unit.flags);
    w.str(unit.arch);
    w.podVector<uint8_t>(unit.cubin);
  }
}

bool readCudaPlan(Reader &r, CudaPlan &plan) {
  plan = CudaPlan();
  uint8_t present = 0;
  uint32_t n = 0;
  if (!r.pod(present, "whether a CUDA kernel plan follows"))
    return false;
  if (!present)
    return true;
  plan.present = true;
  if (!r.count(n, 60, "CUDA choices"))
    return false;
  plan.commands.resize(n);
  for (CudaCommandPlan &command : plan.commands)
    if (!readCommand(r, command))
      return false;
  if (!r.count(n, 20, "fused region kernels"))
    return false;
  plan.fused.resize(n);
  for (CudaFusedPlan &fused : plan.fused)
    if (!r.pod(fused.marker, "a fused region's marker") ||
        !r.str(fused.entry, "a fused region's entry") ||
        !r.pod(fused.elements, "a fused region's elements") ||
        !r.str(fused.unfused, "why a fused region runs op by op"))
      return false;
  if (!r.count(n, 29, "multi-tensor groups"))
    return false;
  plan.multiTensor.resize(n);
  for (CudaMultiTensorPlan &group : plan.multiTensor) {
    uint8_t kind = 0;
    if (!r.pod(kind, "a multi-tensor group's kind") ||
        !r.podVector(group.members, "a multi-tensor group's members") ||
        !r.podVector(group.ends, "a multi-tensor group's ends") ||
        !readSlotLists(r, group.inputs, "a multi-tensor group's inputs") ||
        !readSlotLists(r, group.outputs, "a multi-tensor group's outputs") ||
        !r.podVector(group.elements, "a multi-tensor group's elements") ||
        !r.str(group.entry, "a multi-tensor group's entry") ||
        !r.str(group.label, "a multi-tensor group's label"))
      return false;
    group.kind = static_cast<CudaMultiTensorPlan::Kind>(kind);
  }
  if (!r.count(n, 21, "CUDA units"))
    return false;
  plan.units.resize(n);
  for (CudaUnit &unit : plan.units)
    if (!r.str(unit.name, "a CUDA unit's name") ||
        !r.str(unit.source, "a CUDA unit's source") ||
        !readStrings(r, unit.entries, "a CUDA unit's entries") ||
        !r.pod(unit.flags, "a CUDA unit's flags") ||
        !r.str(unit.arch, "a CUDA unit's architecture") ||
        !r.podVector(unit.cubin, "a CUDA unit's cubin"))
      return false;
  return true;
}

Status validateCudaPlan(const RankProgram &program, const std::string &what,
                        const std::string &where) {
  const CudaPlan &plan = program.cuda;
  if (!plan.present)
    return Status::ok();
  auto invalid = [&](const std::string &message) {
    return Status::error(StatusCode::DataLoss,
                         what + ": " + where + "the CUDA kernel plan " +
                             message + "; the file is damaged: compile it "
                                       "again");
  };
  const size_t commands = program.commands.size();
  if (plan.commands.size() != commands)
    return invalid("has " + std::to_string(plan.commands.size()) +
                   " choices for " + std::to_string(commands) + " commands");
  for (size_t c = 0; c < commands; ++c) {
    const CudaCommandPlan &choice = plan.commands[c];
    const CudaElementwisePlan &e = choice.elementwise;
    const CudaMatmulPlan &m = choice.matmul;
    bool typesOk = knownDType(e.result) && knownDType(m.operands) &&
                   knownDType(m.result);
    for (DType dtype : e.inputs)
      typesOk = typesOk && knownDType(dtype);
    if (static_cast<uint8_t>(choice.route) >= kNumCudaRoutes ||
        choice.code > StatusCode::Cancelled ||
        static_cast<size_t>(e.kind) >= static_cast<size_t>(KernelKind::Count) ||
        !typesOk ||
        static_cast<int64_t>(m.epilogue) >= kNumMatmulEpilogueKinds ||
        e.elementBytes.size() > e.inputs.size() + 1)
      return invalid("has an unknown route, status, kind or type at command " +
                     std::to_string(c));
  }
  for (const CudaFusedPlan &fused : plan.fused) {
    if (fused.marker < 0 || static_cast<size_t>(fused.marker) >= commands ||
        program.commands[fused.marker].kind != CommandKind::Kernel ||
        program.commands[fused.marker].kernel != KernelKind::FusedElementwise ||
        fused.elements < 0)
      return invalid("names command " + std::to_string(fused.marker) +
                     " as a fused region's marker");
  }
  for (const CudaMultiTensorPlan &group : plan.multiTensor) {
    size_t members = group.members.size();
    bool ok = group.kind <= CudaMultiTensorPlan::Kind::SumSquares &&
              members > 0 && group.ends.size() == members &&
              group.inputs.size() == members &&
              group.outputs.size() == members &&
              group.elements.size() == members;
    for (size_t i = 0; ok && i < members; ++i) {
      ok = group.members[i] >= 0 && group.members[i] < group.ends[i] &&
           static_cast<size_t>(group.ends[i]) <= commands &&
           group.elements[i] >= 0 &&
           group.inputs[i].size() == group.inputs[0].size() &&
           group.outputs[i].size() == group.outputs[0].size();
      for (const std::vector<int32_t> *slots :
           {&group.inputs[i], &group.outputs[i]})
        for (int32_t slot : *slots)
          ok = ok && slot >= 0 &&
               static_cast<size_t>(slot) < program.values.size() &&
               program.values[slot].stored();
    }
    if (!ok)
      return invalid("has a multi-tensor group (" + group.label +
                     ") that does not fit the program");
  }
  for (const CudaUnit &unit : plan.units)
    if (unit.flags & ~kKnownCudaUnitFlags)
      return invalid("has a unit (" + unit.name + ") of unknown flags");
  return Status::ok();
}

} // namespace format
} // namespace llmc::rt
