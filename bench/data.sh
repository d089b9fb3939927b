#!/usr/bin/env bash
# Step time of GPT-2 124M on real token shards against synthetic tokens
# (issue #22: within 1%), and a run with the validation loss, on one GPU.
#
#   bench/data.sh prepare BUILD DEPLOY   (build machine: shards, artifacts)
#   bench/data.sh run DEPLOY [STEPS]     (GPU machine)
#
# prepare: bench/data_shards.py tokenizes the project's text into
# DEPLOY/shards; gpt2-124m.llmcx (bench/gpt2-124m.toml, no data: the
# built-in corpus, the synthetic tokens) and gpt2-124m-shards.llmcx (with
# the eval program) are compiled into DEPLOY, beside llmc-run (DEPLOY is a
# deploy folder, e.g. build/deploy-hf).
# run: three llmc-run runs in this order: synthetic, shards (shuffled, read
# ahead), shards with validation every 25 steps; prints the median step
# time (steps 6..STEPS) of each and the ratio.
set -euo pipefail
case "$1" in
  prepare)
    build=$(cd "$2" && pwd) deploy=$(cd "$3" && pwd)
    root=$(cd "$(dirname "$0")/.." && pwd)
    "$root/.venv/bin/python" "$root/bench/data_shards.py" "$build/bin/llmc" "$deploy/shards"
    "$build/bin/llmc" compile "$root/bench/gpt2-124m.toml" -o "$deploy/gpt2-124m.llmcx"
    "$build/bin/llmc" compile "$root/bench/gpt2-124m-shards.toml" -o "$deploy/gpt2-124m-shards.llmcx"
    ;;
  run)
    deploy=$(cd "$2" && pwd) steps=${3:-60}
    out=$(mktemp -d)
    export LD_LIBRARY_PATH="$deploy:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
    export LLMC_KERNEL_CACHE=$out/cache
    run() { # name artifact args...
      local name=$1 artifact=$2; shift 2
      "$deploy/llmc-run" "$deploy/$artifact" --device cuda --steps "$steps" \
        --metrics "$out/$name.jsonl" "$@" > "$out/$name.log" 2>&1 ||
        { cat "$out/$name.log"; exit 1; }
      grep -E "^(training|validation|val |ready)" "$out/$name.log" | sed "s|^|[$name] |"
    }
    # A first run fills the kernel cache, so that no run pays the compile.
    run warm gpt2-124m.llmcx
    run synthetic gpt2-124m.llmcx
    run shards gpt2-124m.llmcx --data "$deploy/shards/train_*.bin"
    run shards-val gpt2-124m-shards.llmcx --data "$deploy/shards/train_*.bin" \
      --val "$deploy/shards/val_*.bin" --tokenizer "$deploy/shards/tokenizer.json"
    python3 - "$out" <<'PY'
import json, statistics, sys
out = sys.argv[1]
def median(name):
    rows = [json.loads(l) for l in open(f"{out}/{name}.jsonl")]
    return statistics.median(r["ms_per_step"] for r in rows if r["step"] > 5), rows
base, _ = median("synthetic")
print(f"| run | ms/step (median, steps 6+) | vs synthetic |")
print(f"|---|---|---|")
for name in ["synthetic", "shards", "shards-val"]:
    ms, rows = median(name)
    vals = [(r["step"], round(r["val_loss"], 4)) for r in rows if "val_loss" in r]
    extra = f" val loss {vals}" if vals else ""
    print(f"| {name} | {ms:.3f} | {ms / base:.4f}x |{extra}")
PY
    ;;
  *)
    echo "usage: bench/data.sh prepare BUILD DEPLOY | run DEPLOY [STEPS]" >&2
    exit 2
    ;;
esac
