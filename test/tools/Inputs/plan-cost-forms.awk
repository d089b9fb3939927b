# Recomputes the step time rows of `llmc plan` (cpu profile, a mesh with one
# axis of 4 ranks, all-reduces only) from the closed forms of
# planner/CostModel.h; input with ',', '(' and ')' removed. See
# llmc-plan-cost.mlir.
function abs(x) { return x < 0 ? -x : x }
$2 == "all-reduce" { ops += $3; sent += $5 }
$3 == "without" && $4 == "overlap" { total = $1; kernels = $5; comm = $9; overlapped = $12 }
$1 == "collectives" { coll = $7 }
$NF ~ /%$/ && $1 != "collectives" { sum += $(NF - 1); rows++ }
END {
  want = ops * 2 * 3 * 5e-6 * 1e3 + sent / 1e10 * 1e3
  printf "collectives %s, ", (ops > 0 && abs(coll - want) <= 0.0006 && abs(comm - coll) <= 0.0006) ? "ok" : "wrong (" coll " ms, want " want ")"
  printf "kernels %s, ", (rows > 0 && abs(sum - kernels) <= 0.0006 * (rows + 1)) ? "ok" : "wrong (" sum " ms, want " kernels ")"
  big = kernels > comm ? kernels : comm
  printf "totals %s\n", (abs(total - kernels - comm) <= 0.0011 && abs(overlapped - big) <= 0.0006) ? "ok" : "wrong"
}
