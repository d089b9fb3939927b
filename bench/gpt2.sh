#!/usr/bin/env bash
# GPT-2 124M training throughput of llmc against PyTorch (eager + SDPA,
# torch.compile) and JAX in one run on one GPU (issue #7, docs/cuda.md).
#
#   bench/gpt2.sh DEPLOY PEERS [STEPS]
#
# DEPLOY: the folder `ninja -C build bench-deploy` fills (llmc-run, the
# runtime libraries, gpt2-124m.llmcx compiled on the build machine from
# bench/gpt2-124m.toml, compile-seconds.txt, and gpt2-124m-v50257.llmcx from
# examples/gpt2-124m.toml: Hugging Face's vocabulary, timed as one more
# llmc row). PEERS: a copy of
# ../shared/bench (torch_gpt2_bench.py, jax_gpt2_bench.py) and, when present,
# train_gpt2cu (llm.c built by ../shared/peers/build-llm.c.sh; it runs on
# random-token llm.c shards written here). Prints one table:
# tokens/s (median step after warm-up), MFU = tok/s * (6N + 12 L d T) / 989e12
# as the peers compute it, peak memory, compile times, and llmc's ratio to
# each peer. Copy the table into bench/RESULTS.md.
set -euo pipefail
deploy=$(cd "$1" && pwd)
peers=$(cd "$2" && pwd)
steps=${3:-30}
out=$(mktemp -d)
export LD_LIBRARY_PATH="$deploy:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export NCCL_NVLS_ENABLE=0

# llmc: a cold run (empty kernel cache: NVRTC compiles every kernel) and a
# cached run; the device memory in use is sampled every 100 ms.
run_llmc() { # name cache [artifact]
  local name=$1 cache=$2 artifact=${3:-gpt2-124m.llmcx}
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 \
    > "$out/$name.mem" 2>/dev/null &
  local smi=$!
  local start=$(date +%s.%N)
  LLMC_KERNEL_CACHE=$cache "$deploy/llmc-run" "$deploy/$artifact" \
    --device cuda --steps "$steps" --metrics "$out/$name.jsonl" \
    > "$out/$name.log" 2>&1 || { cat "$out/$name.log"; kill $smi; exit 1; }
  local end=$(date +%s.%N)
  kill $smi 2>/dev/null || true
  echo "$start $end" > "$out/$name.time"
}
rm -rf "$out/cache"
run_llmc cold "$out/cache"
run_llmc cached "$out/cache"
# Hugging Face's vocabulary (50257), padded inside the program, when deployed.
if [ -f "$deploy/gpt2-124m-v50257.llmcx" ]; then
  run_llmc v50257 "$out/cache" gpt2-124m-v50257.llmcx
fi

# Each torch setting in its own process, so that the device memory in use
# (nvidia-smi, sampled as for llmc: tensors, the caching allocator's
# reserve, the CUDA context) is that setting's; torch itself reports
# max_memory_allocated (its tensors only).
: > "$out/torch.jsonl"
for setting in bf16+flash bf16+flash+compile; do
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 \
    > "$out/torch-$setting.mem" 2>/dev/null &
  smi=$!
  python3 "$peers/torch_gpt2_bench.py" --settings "$setting" \
    >> "$out/torch.jsonl" 2> "$out/torch.err" || cat "$out/torch.err"
  kill $smi 2>/dev/null || true
done
# llm.c (cuDNN attention, its own AdamW + clipping) on random tokens in
# llm.c's shard format: a 256 x int32 header (magic 20240520, version 1,
# token count) then uint16 tokens. Its step time is the `| N ms |` field.
if [ -x "$peers/train_gpt2cu" ]; then
  mkdir -p "$out/llm.c-data"
  python3 - "$out/llm.c-data" <<'PY'
import struct, sys, random
for name, n in (("train_000001.bin", 1 << 23), ("val_000000.bin", 1 << 20)):
    rng = random.Random(name)
    with open(f"{sys.argv[1]}/{name}", "wb") as f:
        f.write(struct.pack("<256i", 20240520, 1, n, *([0] * 253)))
        f.write(struct.pack(f"<{n}H", *(rng.randrange(50257) for _ in range(n))))
PY
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 \
    > "$out/llm.c.mem" 2>/dev/null &
  smi=$!
  (cd "$out" && "$peers/train_gpt2cu" -i "$out/llm.c-data/train_*.bin" \
     -j "$out/llm.c-data/val_*.bin" -e d12 -b 16 -t 1024 -x "$steps" \
     -v 100000 -s 100000 -h 0 -o "$out/llm.c-log" > "$out/llm.c.log" 2>&1) ||
    tail -5 "$out/llm.c.log"
  kill $smi 2>/dev/null || true
fi
python3 "$peers/jax_gpt2_bench.py" --impls cudnn \
  > "$out/jax.jsonl" 2> "$out/jax.err" || tail -5 "$out/jax.err"

python3 - "$out" "$deploy" "$steps" <<'PY'
import json, statistics, sys, os
out, deploy, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
V, L, d, T, B = 50304, 12, 768, 1024, 16
N = V * d + L * (12 * d * d + 13 * d) + 2 * d          # without wpe, tied head
flops_tok = 6 * N + 12 * L * d * T
def llmc(name):
    rows = [json.loads(l) for l in open(f"{out}/{name}.jsonl")]
    ms = statistics.median(r["ms_per_step"] for r in rows[5:]) if len(rows) > 5 else float("nan")
    start, end = map(float, open(f"{out}/{name}.time").read().split())
    mem = [int(x) for x in open(f"{out}/{name}.mem").read().split() if x.strip().isdigit()]
    loss = rows[-1]["loss"]
    return ms, end - start - sum(r["ms_per_step"] for r in rows) / 1e3, max(mem) / 1024 if mem else float("nan"), loss, rows
cold = llmc("cold"); cached = llmc("cached")
compile_s = open(f"{deploy}/compile-seconds.txt").read().strip()
arena = open(f"{deploy}/arena-bytes.txt").read().strip()
tok = B * T / (cached[0] / 1e3)
table = [("llmc", tok, tok * flops_tok / 989e12, f"{int(arena)/2**30:.2f} planned, {cached[2]:.2f} used", f"{compile_s} s + {cold[1]:.1f} s NVRTC", f"{cached[1]:.1f} s", cached[3])]
if os.path.exists(f"{out}/v50257.jsonl"):
    hf = llmc("v50257")
    t = B * T / (hf[0] / 1e3)
    table.append(("llmc, vocabulary 50257 (padded inside)", t, t * flops_tok / 989e12,
                  f"{hf[2]:.2f} used", "", f"{hf[1]:.1f} s", hf[3]))
peers = []
for f in ("torch.jsonl", "jax.jsonl"):
    if os.path.exists(f"{out}/{f}"):
        for l in open(f"{out}/{f}"):
            try: r = json.loads(l)
            except ValueError: continue
            if "tok_s" not in r:
                print(f"{r.get('system')} {r.get('setting')}: {r.get('error', 'no result')}")
                continue
            name = (r.get("system", "?").split()[0]) + " " + r.get("setting", r.get("impl", ""))
            mem = f'{r.get("peak_mem_gib", float("nan"))}'
            used = f"{out}/torch-{r.get('setting')}.mem"
            if f == "torch.jsonl" and os.path.exists(used):
                samples = [int(x) for x in open(used).read().split() if x.strip().isdigit()]
                if samples:
                    mem = f"{mem} allocated, {max(samples) / 1024:.2f} used"
            peers.append((name, r["tok_s"], r["mfu"], mem, f'{r.get("warmup_s", "?")} s warm-up', "", r.get("loss")))
if os.path.exists(f"{out}/llm.c.log"):
    import re
    ms = [float(m.group(1)) for m in re.finditer(r"\|\s*([0-9.]+) ms\s*\|", open(f"{out}/llm.c.log").read())]
    samples = [int(x) for x in open(f"{out}/llm.c.mem").read().split() if x.strip().isdigit()]
    if len(ms) > 5:
        t = B * T / (statistics.median(ms[5:]) / 1e3)
        peers.append(("llm.c cudnn", t, t * flops_tok / 989e12,
                      f"{max(samples) / 1024:.2f} used" if samples else "?", "nvcc (ahead)", "", None))
    else:
        print("llm.c: no step times in its log")
print(f"GPT-2 124M, B={B}, T={T}, bf16, AdamW + clipping; {steps} llmc steps, median after 5")
print(f"| system | tokens/s | MFU | peak memory (GiB) | cold compile | cached start | last loss | llmc / this |")
print("|---|---|---|---|---|---|---|---|")
for name, t, mfu, mem, cold_s, cached_s, loss in table + peers:
    ratio = tok / t if t else float("nan")
    print(f"| {name} | {t:,.0f} | {mfu*100:.1f}% | {mem} | {cold_s} | {cached_s} | {loss} | {ratio:.3f} |")
losses = [r["loss"] for r in cached[4]]
print("llmc losses:", " ".join(f"{x:.3f}" for x in losses[:3]), "...", " ".join(f"{x:.3f}" for x in losses[-3:]))
PY
