//===- Phase.cpp - which part of a training step an op belongs to ---------===//
#include "ir/Phase.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace llmc {

StringRef phaseName(Phase phase) {
  switch (phase) {
  case Phase::Forward:
    return "forward";
  case Phase::Backward:
    return "backward";
  case Phase::Optimizer:
    return "optimizer";
  }
  return "forward";
}

Phase phaseOf(Location loc) {
  if (auto fused = dyn_cast<FusedLoc>(loc))
    if (auto tag = dyn_cast_or_null<StringAttr>(fused.getMetadata())) {
      if (tag.getValue() == "backward")
        return Phase::Backward;
      if (tag.getValue() == "optimizer")
        return Phase::Optimizer;
    }
  return Phase::Forward;
}

Location withPhase(Location loc, Phase phase) {
  if (phase == Phase::Forward || phaseOf(loc) != Phase::Forward)
    return loc;
  MLIRContext *context = loc.getContext();
  return FusedLoc::get(context, {loc},
                       StringAttr::get(context, phaseName(phase)));
}

std::string modelPartOf(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations()) {
      std::string part = modelPartOf(inner);
      if (!part.empty())
        return part;
    }
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return modelPartOf(callSite.getCallee());
  return "";
}

void copyPipelinePlacement(Operation *from, Operation *to) {
  if (!from || !to)
    return;
  for (StringRef name : {"llmc.stage", "llmc.chunk", "llmc.microbatch"})
    if (Attribute attr = from->getAttr(name))
      to->setAttr(name, attr);
}

} // namespace llmc
