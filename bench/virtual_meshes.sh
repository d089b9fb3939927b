#!/usr/bin/env bash
# Every mesh on one GPU (issue #26, "done when"): GPT-2 124M and a 1B LLaMA
# (bench/llama-1b.toml), bf16, under dp2, tp2, dp2 x tp2, tp2 + sp, dp2 with
# ZeRO-1/2/3, cp2, pp2 (1F1B, 4 microbatches) and dp2 x pp2, and a small MoE
# under ep2, each on virtual ranks of ONE GPU (`llmc-run --virtual-ranks`,
# docs/distributed.md) against the one-GPU run of the same global batch
# (the pipelines against one GPU accumulating the same 4 microbatches).
#
#   bench/virtual_meshes.sh DEPLOY [STEPS] [MODELS]
#
# DEPLOY: what `ninja -C build virtual-meshes-deploy` fills
# (build/deploy-virtual). STEPS: 20 by default. MODELS: "gpt2 llama moe".
#
# Check: at every step, |loss_mesh - loss_1gpu| / loss_1gpu <= 1e-2, the
# bf16 bound of bench/meshes.sh (its header says why). Virtual ranks share
# one GPU, so ms/step is not a scaling figure: it is shown to say what a
# check costs. Exit status 0 when every run passes.
set -euo pipefail
deploy=$(cd "$1" && pwd)
steps=${2:-20}
models=${3:-gpt2 llama moe}
export LD_LIBRARY_PATH="$deploy:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export NCCL_NVLS_ENABLE=0
export LLMC_KERNEL_CACHE=${LLMC_KERNEL_CACHE:-$(mktemp -d)/kernels}
out=${BENCH_OUT:-$(mktemp -d)}
mkdir -p "$out"
runs_of() {
  case $1 in
    moe) echo "1gpu ep2" ;;
    *) echo "1gpu dp2 tp2 dp2-tp2 tp2-sp dp2-zero1 dp2-zero2 dp2-zero3 cp2" \
            "1gpu-mb4 pp2 dp2-pp2" ;;
  esac
}
for model in $models; do
  for run in $(runs_of "$model"); do
    flags=(--virtual-ranks)
    case $run in 1gpu*) flags=() ;; esac
    start=$(date +%s%N)
    if ! "$deploy/llmc-run" "$deploy/$model-$run.llmcx" --device cuda \
        "${flags[@]}" --steps "$steps" --sample-tokens 0 --metrics "$out/$model-$run.jsonl" \
        > "$out/$model-$run.log" 2>&1; then
      echo "$model-$run failed:"; tail -20 "$out/$model-$run.log"
      : > "$out/$model-$run.jsonl"
    fi
    echo "$model-$run: $((($(date +%s%N) - start) / 1000000)) ms in all" >&2
  done
done
python3 - "$out" "$steps" $models <<'PY'
import json, re, statistics, sys
out, steps, models = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
TOL = 1e-2
def rows(name):
    try:
        return [json.loads(l) for l in open(f"{out}/{name}.jsonl")]
    except (OSError, ValueError):
        return []
def memory(name):
    text = open(f"{out}/{name}.log", errors="replace").read()
    m = re.search(r"([0-9.]+) GiB in use", text)
    return m.group(1) if m else "?"
RUNS = {"moe": ["ep2"]}
DEFAULT = ["dp2", "tp2", "dp2-tp2", "tp2-sp", "dp2-zero1", "dp2-zero2",
           "dp2-zero3", "cp2", "pp2", "dp2-pp2"]
failed = 0
print("| model | mesh | virtual ranks | steps | first loss | last loss | "
      "worst rel. loss diff vs 1 GPU | at step | reference | ms/step (median "
      "after 3) | GiB in use | result |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for model in models:
    for run in RUNS.get(model, DEFAULT):
        ref_name = "1gpu-mb4" if "pp" in run else "1gpu"
        ref, r = rows(f"{model}-{ref_name}"), rows(f"{model}-{run}")
        ranks = 1
        for part in re.findall(r"(?:dp|tp|pp|cp|ep)(\d+)", run):
            ranks *= int(part)
        if not r or not ref:
            failed += 1
            print(f"| {model} | {run} | {ranks} | {len(r)} | - | - | - | - | "
                  f"{ref_name} | - | - | FAIL (no metrics) |")
            continue
        ms = statistics.median(x["ms_per_step"] for x in r[3:]) if len(r) > 3 else float("nan")
        diffs = [abs(a["loss"] - b["loss"]) / abs(b["loss"]) for a, b in zip(r, ref)]
        worst = max(diffs); at = diffs.index(worst) + 1
        ok = len(r) == steps and len(ref) == steps and worst <= TOL and all(
            x["loss"] == x["loss"] for x in r)
        failed += not ok
        print(f"| {model} | {run} | {ranks} | {len(r)} | {r[0]['loss']:.4f} | "
              f"{r[-1]['loss']:.4f} | {worst:.2e} | {at} | {ref_name} | {ms:.1f} | "
              f"{memory(f'{model}-{run}')} | {'PASS' if ok else 'FAIL'} |")
print(f"bound: {TOL:g} relative at every step; "
      f"{'all pass' if not failed else f'{failed} FAILED'}")
sys.exit(1 if failed else 0)
PY
