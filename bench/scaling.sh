#!/usr/bin/env bash
# Data-parallel scaling on the GPUs of one machine (issue #9, point 4).
#
#   bench/scaling.sh DEPLOY [STEPS] [MODELS]
#
# DEPLOY: what `ninja -C build scaling-deploy` fills (build/deploy-scaling).
# STEPS: 30 by default (median step time after 5). MODELS: "gpt2 llama".
#
# 1. The NCCL all-reduce bus bandwidth over all GPUs (nccl-allreduce-bench,
#    bf16: the gradients of these bf16 runs are all-reduced in bf16).
# 2. Weak scaling per model: one GPU at its batch (gpt2-1gpu: B=16;
#    llama-1gpu: B=8, T=1024) against dp over N GPUs at N times the batch
#    (gpt2-dp2-weak, llama-dp2-weak): tokens/s per GPU and the efficiency
#    (tokens/s per GPU on N) / (tokens/s on 1).
# 3. Predicted against measured step time on N GPUs: the one-GPU step plus
#    the all-reduces of `llmc plan` (count and payload, from DEPLOY/*.plan.
#    txt) at the measured bus bandwidth, 2(N-1)/N * S / busbw(S) each, with
#    no overlap: an upper bound, since the runtime lets the backward's
#    kernels run while earlier buckets are reduced (docs/distributed.md).
#
# Artifacts exist for N = 2 only (the machines lent so far have had 2 GPUs);
# the script reports what it could run. Copy its table into
# bench/RESULTS.md.
set -euo pipefail
deploy=$(cd "$1" && pwd)
steps=${2:-30}
models=${3:-gpt2 llama}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/launch.sh"
bench_setup "bench/scaling.sh"
n=2
"$deploy/nccl-allreduce-bench" --gpus "$n" --dtype bf16 > "$out/allreduce.jsonl"
for model in $models; do
  # A first short run fills the kernel cache, so that neither timed run
  # pays for NVRTC.
  llmc_launch 1 "$deploy/$model-1gpu.llmcx" "$out/warm.log" --steps 1
  llmc_launch 1 "$deploy/$model-1gpu.llmcx" "$out/$model-1.log" \
    --steps "$steps" --metrics "$out/$model-1.jsonl"
  llmc_launch "$n" "$deploy/$model-dp$n-weak.llmcx" "$out/$model-$n.log" \
    --steps "$steps" --metrics "$out/$model-$n.jsonl"
done
python3 - "$out" "$deploy" "$n" $models <<'PY'
import json, math, re, statistics, sys
out, deploy, n, models = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
bw = [json.loads(l) for l in open(f"{out}/allreduce.jsonl")]
print(f"NCCL all-reduce (bf16, sum) over {n} GPUs:")
print("| bytes | time (us) | algbw (GB/s) | busbw (GB/s) |")
print("|---|---|---|---|")
for r in bw:
    print(f"| {r['bytes']:,} | {r['us']:.1f} | {r['algbw_gbs']:.1f} | {r['busbw_gbs']:.1f} |")
def busbw(size):
    # Log-log interpolation between the measured sizes (clamped at the ends).
    xs = [math.log(r["bytes"]) for r in bw]; ys = [r["busbw_gbs"] for r in bw]
    x = math.log(max(size, 1))
    if x <= xs[0]: return ys[0]
    for (x0, y0), (x1, y1) in zip(zip(xs, ys), zip(xs[1:], ys[1:])):
        if x <= x1: return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return ys[-1]
def median_ms(name):
    rows = [json.loads(l) for l in open(f"{out}/{name}.jsonl")]
    return statistics.median(r["ms_per_step"] for r in rows[5:]), rows
def tokens(name):
    text = open(f"{deploy}/{name}.plan.txt").read()
    m = re.search(r"(\d+) x (\d+) tokens per step", text)
    return int(m[1]) * int(m[2])
def allreduces(name):
    text = open(f"{deploy}/{name}.plan.txt").read()
    m = re.search(r"^\s*dp\s+all-reduce\s+(\d+)\s+([\d,]+)", text, re.M)
    return (int(m[1]), int(m[2].replace(",", ""))) if m else (0, 0)
print()
print(f"Weak scaling, data parallel, {n} GPUs against 1 (median step after 5 of {len(median_ms(models[0] + '-1')[1])}):")
print("| model | tokens/step/GPU | 1 GPU ms/step | 1 GPU tok/s | %d GPUs ms/step | tok/s per GPU | efficiency | all-reduces/step | payload (MB) | predicted ms/step (no overlap) | measured / predicted |" % n)
print("|---|---|---|---|---|---|---|---|---|---|---|")
for model in models:
    t1, _ = median_ms(f"{model}-1"); tn, _ = median_ms(f"{model}-{n}")
    tok1 = tokens(f"{model}-1gpu"); tokn = tokens(f"{model}-dp{n}-weak")
    per1 = tok1 / (t1 / 1e3); pern = tokn / n / (tn / 1e3)
    ops, payload = allreduces(f"{model}-dp{n}-weak")
    comm_ms = sum(2 * (n - 1) / n * (payload / ops) / (busbw(payload / ops) * 1e9) * 1e3 for _ in range(ops)) if ops else 0
    predicted = t1 * (tokn / n) / tok1 + comm_ms
    print(f"| {model} | {tokn // n:,} | {t1:.1f} | {per1:,.0f} | {tn:.1f} | {pern:,.0f} | {pern / per1 * 100:.1f}% | {ops} | {payload / 1e6:.1f} | {predicted:.1f} | {tn / predicted:.2f} |")
PY
