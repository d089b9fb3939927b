#!/usr/bin/env bash
# The planner at scale (issue #28, point 4; docs/planning.md "The search"):
# times `llmc plan --gpus N --json` (the search only) on three cases and prints a
# table: the command's wall time and the search's own seconds (from the JSON).
#   7B LLaMA (bench/llama2-7b.toml), 64 H200s, 1M tokens a step (256 x 4096)
#   the same at 4M tokens a step (--batch-size 1024)
#   GPT-3 175B (bench/gpt3-175b.toml), 1024 A100s in 128 nodes
# Targets on the project's 2-core host: < 30 s, < 30 s, < 60 s.
# Usage: bench/plan_scale.sh [BUILD_DIR] [TIMEOUT_S]   (default build, 900)
# On a shared host wrap it in the lock: flock /tmp/llmc-heavy.lock bench/plan_scale.sh
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
limit=${2:-900}
llmc=$build/bin/llmc
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

cases=(
  "llama2-7b 64 GPUs 1M tokens|64|$root/bench/llama2-7b.toml|--device-profile h200"
  "llama2-7b 64 GPUs 4M tokens|64|$root/bench/llama2-7b.toml|--device-profile h200 --batch-size 1024"
  "gpt3-175b 1024 GPUs 3M tokens|1024|$root/bench/gpt3-175b.toml|--device-profile a100 --nodes 128"
)
printf '%-32s %9s %9s %8s %10s %9s  %s\n' case wall_s search_s target probes evaluated winner
i=0
for c in "${cases[@]}"; do
  IFS='|' read -r name gpus toml extra <<<"$c"
  target=$([ "$gpus" = 1024 ] && echo 60 || echo 30)
  start=$(date +%s.%N)
  # shellcheck disable=SC2086
  if timeout "$limit" "$llmc" plan "$toml" --gpus "$gpus" $extra --json \
      >"$out/$i.json" 2>"$out/$i.err"; then
    wall=$(echo "$(date +%s.%N) - $start" | bc)
    python3 - "$out/$i.json" "$name" "$wall" "$target" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
w = d["winner"] or {}
win = "%s %.2f ms" % (w.get("candidate", "none"), w.get("step_ms", 0))
print("%-32s %9.1f %9.1f %8s %10d %9d  %s" % (sys.argv[2], float(sys.argv[3]),
      d["seconds"], sys.argv[4], d["probe_compiles"], d["evaluated"], win))
PY
  else
    printf '%-32s %9s %9s %8s %10s %9s  %s\n' "$name" ">$limit" - "$target" - - "timed out or failed"
  fi
  i=$((i + 1))
done
