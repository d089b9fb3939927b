#!/usr/bin/env bash
# FP8 against bf16 on one GPU (issue #14 of the docs, the tool's #24): tokens/s
# and the validation loss after STEPS steps of real text, for LLaMA 1B
# (bench/llama-1b.toml) and GPT-2 1.5B (bench/gpt2-1.5b.toml on one GPU).
#
#   bench/fp8.sh prepare BUILD DEPLOY      (build machine: shards, artifacts)
#   bench/fp8.sh run DEPLOY MODEL [STEPS]  (GPU machine; MODEL llama-1b or
#                                           gpt2-1.5b; STEPS default 500)
#
# prepare: the project's text as token shards (bench/data_shards.py, 8,192
# ids, so both vocabularies hold them) into DEPLOY/shards, then for each
# model a bf16 and an fp8 artifact, DEPLOY/MODEL-POLICY.llmcx, from the
# model's bench description with only these changes: the policy; [data] and
# [eval] (every 100 steps, 10 batches of the held-out 5%); GPT-2 1.5B with
# batch 8 (not 64) on one GPU and 100 warm-up steps (not 700), so that the
# learning rate has warmed up inside 500 steps. CUDA_ARCH=sm_90 compiles the
# kernels into the artifacts (llmc compile --cuda-arch), so the GPU machine
# does not.
# run: the bf16 then the fp8 artifact of MODEL for STEPS steps, then a table:
# median ms/step of steps 6..STEPS, tokens/s, each validation loss, and the
# ratios fp8 / bf16.
set -euo pipefail
models="llama-1b gpt2-1.5b"
case "${1:-}" in
  prepare)
    build=$(cd "$2" && pwd) deploy=$(mkdir -p "$3" && cd "$3" && pwd)
    root=$(cd "$(dirname "$0")/.." && pwd)
    [ -f "$deploy/shards/tokenizer.json" ] ||
      "$root/.venv/bin/python" "$root/bench/data_shards.py" "$build/bin/llmc" "$deploy/shards"
    arch=()
    [ -n "${CUDA_ARCH:-}" ] && arch=(--cuda-arch="$CUDA_ARCH")
    tmp=$(mktemp -d)
    for model in $models; do
      for policy in bf16 fp8; do
        toml=$tmp/$model-$policy.toml
        sed -e "s/^policy = .*/policy = \"$policy\"/" \
            -e 's/^devices = .*/devices = "cuda"/' -e '/^mesh = /d' \
            "$root/bench/$model.toml" > "$toml"
        if [ "$model" = gpt2-1.5b ]; then
          sed -i -e 's/^batch_size = .*/batch_size = 8/' \
                 -e 's/^warmup_steps = .*/warmup_steps = 100/' "$toml"
        fi
        cat >> "$toml" <<EOF

[data]
train = "$deploy/shards/train_*.bin"
val = "$deploy/shards/val_*.bin"
tokenizer = "$deploy/shards/tokenizer.json"

[eval]
every = 100
steps = 10
EOF
        echo "compiling $model-$policy" >&2
        "$build/bin/llmc" compile "$toml" "${arch[@]}" -o "$deploy/$model-$policy.llmcx"
      done
    done
    rm -rf "$tmp"
    ;;
  run)
    deploy=$(cd "$2" && pwd) model=$3 steps=${4:-500}
    out=${OUT:-$(mktemp -d)}
    export LD_LIBRARY_PATH="$deploy:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
    export LLMC_KERNEL_CACHE=${LLMC_KERNEL_CACHE:-$deploy/kcache}
    export NCCL_NVLS_ENABLE=0
    for policy in bf16 fp8; do
      name=$model-$policy
      "$deploy/llmc-run" "$deploy/$name.llmcx" --device cuda --steps "$steps" \
        --data "$deploy/shards/train_*.bin" --val "$deploy/shards/val_*.bin" \
        --tokenizer "$deploy/shards/tokenizer.json" --sample-tokens 0 \
        --metrics "$out/$name.jsonl" > "$out/$name.log" 2>&1 ||
        { tail -40 "$out/$name.log"; exit 1; }
      grep -E "^(ready|validation|val |step +($steps|1) )" "$out/$name.log" | sed "s|^|[$name] |" || true
    done
    python3 - "$out" "$model" <<'PY'
import json, statistics, sys
out, model = sys.argv[1], sys.argv[2]
def load(policy):
    rows = [json.loads(l) for l in open(f"{out}/{model}-{policy}.jsonl")]
    ms = statistics.median(r["ms_per_step"] for r in rows if r["step"] > 5)
    tps = statistics.median(r["tokens_per_s"] for r in rows if r["step"] > 5)
    vals = [(r["step"], r["val_loss"]) for r in rows if "val_loss" in r]
    return ms, tps, vals, rows[-1]["loss"]
base = load("bf16")
print(f"| {model} | ms/step (median, steps 6+) | tokens/s | train loss (last) | val loss (step: loss) |")
print("|---|---|---|---|---|")
for policy in ["bf16", "fp8"]:
    ms, tps, vals, last = load(policy)
    print(f"| {policy} | {ms:.2f} | {tps:,.0f} | {last:.4f} | " +
          ", ".join(f"{s}: {v:.4f}" for s, v in vals) + " |")
fp8 = load("fp8")
print(f"fp8 / bf16: {base[0] / fp8[0]:.3f}x tokens/s; last val loss "
      f"{fp8[2][-1][1]:.4f} vs {base[2][-1][1]:.4f} "
      f"({(fp8[2][-1][1] / base[2][-1][1] - 1) * 100:+.2f}%)")
PY
    ;;
  *)
    echo "usage: bench/fp8.sh prepare BUILD DEPLOY | run DEPLOY MODEL [STEPS]" >&2
    exit 2
    ;;
esac
