//===- Sharding.cpp - meshes and shardings --------------------------------===//

#include "sharding/Sharding.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace llmc {

int64_t Mesh::numDevices() const {
  int64_t n = 1;
  for (int64_t size : sizes)
    n *= size;
  return n;
}

int64_t Mesh::axisIndex(StringRef name) const {
  for (auto [i, axis] : llvm::enumerate(names))
    if (axis == name)
      return static_cast<int64_t>(i);
  return -1;
}

int64_t Mesh::ways(ArrayRef<int64_t> axes) const {
  int64_t n = 1;
  for (int64_t axis : axes)
    n *= sizes[axis];
  return n;
}

std::string Mesh::axesText(ArrayRef<int64_t> axes) const {
  std::string text;
  for (auto [i, axis] : llvm::enumerate(axes))
    text += (i ? "," : "") + names[axis];
  return text;
}

FailureOr<Mesh> Mesh::fromModule(ModuleOp module) {
  auto grid = module.lookupSymbol<shard::GridOp>("mesh");
  auto names = module->getAttrOfType<ArrayAttr>("llmc.mesh_axes");
  if (!grid || !names || names.size() != grid.getShape().size())
    return failure();
  Mesh mesh;
  for (auto [name, size] : llvm::zip(names, grid.getShape())) {
    auto text = dyn_cast<StringAttr>(name);
    if (!text || size < 1)
      return failure();
    mesh.names.push_back(text.getValue().str());
    mesh.sizes.push_back(size);
  }
  return mesh;
}

void Mesh::addToModule(ModuleOp module) const {
  OpBuilder b(module.getBodyRegion());
  b.setInsertionPointToStart(module.getBody());
  shard::GridOp::create(b, module.getLoc(), "mesh", sizes);
  SmallVector<Attribute> axisNames;
  for (const std::string &name : names)
    axisNames.push_back(b.getStringAttr(name));
  module->setAttr("llmc.mesh_axes", b.getArrayAttr(axisNames));
}

Sharding Sharding::replicated(int64_t rank) {
  Sharding s;
  s.dims.resize(rank);
  return s;
}

bool Sharding::isReplicated() const {
  return partial.empty() &&
         llvm::none_of(dims, [](const DimSplit &d) { return d.isSplit(); });
}

bool Sharding::usesAxis(int64_t axis) const {
  return llvm::is_contained(partial, axis) || dimOfAxis(axis) >= 0;
}

int64_t Sharding::dimOfAxis(int64_t axis) const {
  for (auto [i, dim] : llvm::enumerate(dims))
    if (llvm::is_contained(dim.axes, axis))
      return static_cast<int64_t>(i);
  return -1;
}

Sharding Sharding::complete() const {
  Sharding s = *this;
  s.partial.clear();
  s.kind = PartialKind::Sum;
  return s;
}

FailureOr<SmallVector<int64_t>> Sharding::localShape(ArrayRef<int64_t> global,
                                                    const Mesh &mesh) const {
  if (global.size() != dims.size())
    return failure();
  SmallVector<int64_t> local(global);
  for (auto [i, dim] : llvm::enumerate(dims)) {
    if (!dim.isSplit())
      continue;
    int64_t n = mesh.ways(dim.axes);
    if (dim.groups < 1 || global[i] % (dim.groups * n) != 0)
      return failure();
    local[i] = global[i] / n;
  }
  return local;
}

std::string Sharding::text(const Mesh &mesh) const {
  std::string out = "[";
  for (auto [i, dim] : llvm::enumerate(dims)) {
    out += i ? ", [" : "[";
    out += mesh.axesText(dim.axes);
    if (dim.isSplit() && dim.groups != 1)
      out += " x" + std::to_string(dim.groups);
    if (dim.isSplit() && dim.zigzag)
      out += " zigzag";
    out += "]";
  }
  out += "]";
  if (!partial.empty())
    out += std::string(" partial(") +
           (kind == PartialKind::Sum ? "sum" : "max") + " over " +
           mesh.axesText(partial) + ")";
  return out;
}

Attribute Sharding::toAttr(MLIRContext *context, const Mesh &mesh) const {
  Builder b(context);
  SmallVector<Attribute> perDim;
  for (const DimSplit &dim : dims) {
    SmallVector<Attribute> axes;
    for (int64_t axis : dim.axes)
      axes.push_back(b.getStringAttr(mesh.names[axis]));
    perDim.push_back(b.getArrayAttr(axes));
  }
  return b.getArrayAttr(perDim);
}

Attribute Sharding::groupsAttr(MLIRContext *context) const {
  if (llvm::all_of(dims, [](const DimSplit &d) { return d.groups == 1; }))
    return {};
  SmallVector<int64_t> groups;
  for (const DimSplit &dim : dims)
    groups.push_back(dim.groups);
  return DenseI64ArrayAttr::get(context, groups);
}

Attribute Sharding::zigzagAttr(MLIRContext *context) const {
  if (llvm::none_of(dims, [](const DimSplit &d) { return d.zigzag; }))
    return {};
  SmallVector<int64_t> flags;
  for (const DimSplit &dim : dims)
    flags.push_back(dim.zigzag ? 1 : 0);
  return DenseI64ArrayAttr::get(context, flags);
}

FailureOr<Sharding> Sharding::fromAttrs(Attribute axes, Attribute groups,
                                        const Mesh &mesh, int64_t rank,
                                        Attribute zigzag) {
  Sharding s = replicated(rank);
  if (!axes)
    return s;
  auto perDim = dyn_cast<ArrayAttr>(axes);
  if (!perDim || static_cast<int64_t>(perDim.size()) != rank)
    return failure();
  for (auto [i, dimAttr] : llvm::enumerate(perDim)) {
    auto names = dyn_cast<ArrayAttr>(dimAttr);
    if (!names)
      return failure();
    for (Attribute name : names) {
      auto text = dyn_cast<StringAttr>(name);
      int64_t axis = text ? mesh.axisIndex(text.getValue()) : -1;
      if (axis < 0)
        return failure();
      s.dims[i].axes.push_back(axis);
    }
  }
  if (auto g = dyn_cast_or_null<DenseI64ArrayAttr>(groups)) {
    if (static_cast<int64_t>(g.size()) != rank)
      return failure();
    for (auto [i, value] : llvm::enumerate(g.asArrayRef()))
      s.dims[i].groups = value;
  }
  if (auto z = dyn_cast_or_null<DenseI64ArrayAttr>(zigzag)) {
    if (static_cast<int64_t>(z.size()) != rank)
      return failure();
    for (auto [i, value] : llvm::enumerate(z.asArrayRef()))
      s.dims[i].zigzag = value != 0;
  }
  return s;
}

} // namespace llmc
