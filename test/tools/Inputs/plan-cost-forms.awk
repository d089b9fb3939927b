# Recomputes the step time rows of `llmc plan` (cpu profile, a mesh with one
# axis of 4 ranks, all-reduces only) from the closed forms of
# planner/CostModel.h; input with ',', '(' and ')' removed. See
# llmc-plan-cost.mlir.
function abs(x) { return x < 0 ? -x : x }
$2 == "all-reduce" { ops += $3; sent += $5 }
$3 == "without" && $4 == "overlap" { total = $1; kernels = $5; comm = $9; overlapped = $12 }
$1 == "collectives" { coll = $7 }
# predicted step: X ms the larger of the critical path Y ms and 4 ranks' W
# ms of work on 2 shared cores I% of them idle D% of the collective time in
# groups that drain them: Z ms
$1 == "predicted" && $2 == "step:" { step = $3; crit = $11; work = $16; idle = $24; drain = $28; shared = $38 }
$NF ~ /%$/ && $1 != "collectives" { sum += $(NF - 1); rows++ }
END {
  want = ops * (26e-6 + 2 * 3 * 0.2e-6) * 1e3 + sent / 4e9 * 1e3
  printf "collectives %s, ", (ops > 0 && abs(coll - want) <= 0.0006 && abs(comm - coll) <= 0.0006) ? "ok" : "wrong (" coll " ms, want " want ")"
  printf "kernels %s, ", (rows > 0 && abs(sum - kernels) <= 0.0006 * (rows + 1)) ? "ok" : "wrong (" sum " ms, want " kernels ")"
  big = kernels > comm ? kernels : comm
  printf "totals %s, ", (abs(total - kernels - comm) <= 0.0011 && abs(overlapped - big) <= 0.0006) ? "ok" : "wrong"
  # The 4 ranks share 2 cores: their summed work over 2, of which the
  # profile's shared_idle (8.5%) and shared_drain_idle (5.2%: the dp group
  # of 4 ranks is the only one for the 2 cores, so all the collective time
  # drains them; no pipeline) are lost, or the critical path (one rank's
  # no-overlap time) if longer.
  most = crit > shared ? crit : shared
  printf "shared cores %s\n", (abs(crit - total) <= 0.0011 && abs(work - 4 * total) <= 0.0041 && drain + 0 == 100 && idle + 0 == 13.7 && abs(shared - work / 2 / (1 - 0.085 - 0.052)) <= 0.0011 && abs(step - most) <= 0.0011 && shared > 0) ? "ok" : "wrong (" step ", " crit ", " work ", " idle ", " drain ", " shared ")"
}
