#!/usr/bin/env python3
"""Context parallelism (ring attention) against one device, on CPU virtual devices.

LLaMA tiny (8 query heads, 4 key/value heads) with sequences of 256 tokens
trains 10 AdamW steps on one device and under cp2, cp4, dp2 x cp2 and
cp2 x tp2
(`[parallel] cp`, one CPU virtual device per rank), from the same initial
parameters and the same data; GPT-2 tiny (learned positions, wpe) under cp2.
The sequence is cut into 2·cp chunks and rank r holds chunks r and
2·cp-1-r; attention runs as a ring (docs/sharding.md, "Context
parallelism"). Checked per mesh, as test/parity/sharding_parity.py does:

  losses      |loss_mesh(t) - loss_1(t)| / |loss_1(t)|   <= 1e-5 at every step
  grad norms  the same, <= 1e-5
  parameters  ||p_mesh - p_1|| / ||p_1||                   <= 1e-4 per tensor
  moments     the same for AdamW's m and v, <= 1e-4 per tensor

Why these tolerances: ring attention computes the same softmax with the
row maximum and sum combined block by block (online softmax) instead of in
one pass, and sums over tokens (loss mean, weight gradients) are finished
by an all-reduce over cp: the same float32 numbers added in another order,
a few units of float32 roundoff (6e-8) per step. Parameters and moments are
compared by the L2 norm of each whole tensor because AdamW divides each
gradient entry by its own magnitude in the first steps (see
sharding_parity.py; GPT-2's key bias, whose gradient is zero in exact
arithmetic, is left out there and here).

The mesh really is the one asked for: `llmc inspect` must show it.
Exit status 0 when every mesh passes; the table says what was measured.
"""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sharding_parity import (LOSS_TOL, PARAM_TOL, STEPS, load_safetensors,  # noqa: E402
                             worst_step, worst_tensor)

MODELS = {
    "llama": """
[model]
family = "llama"
vocab_size = 256
layers = 2
width = 64
heads = 8
kv_heads = 4
ffn_width = 176
norm_eps = 1e-6
rope_theta = 10000.0
""",
    "gpt2": """
[model]
family = "gpt2"
vocab_size = 128
layers = 2
width = 64
heads = 4
max_positions = 256
""",
}

TRAIN = """
[train]
batch_size = 4
seq_len = 256
steps = {steps}
learning_rate = 1e-3
warmup_steps = 2
log_every = 1
"""

# (model, name, dp, cp, tp)
MESHES = [
    ("llama", "cp2", 1, 2, 1),
    ("llama", "cp4", 1, 4, 1),
    ("llama", "dp2xcp2", 2, 2, 1),
    ("llama", "cp2xtp2", 1, 2, 2),
    ("gpt2", "cp2", 1, 2, 1),
]


def run(llmc, workdir, model, name, dp, cp, tp):
    toml = os.path.join(workdir, f"{model}-{name}.toml")
    ckpt = os.path.join(workdir, f"{model}-{name}-ckpt")
    metrics = os.path.join(workdir, f"{model}-{name}.jsonl")
    artifact = os.path.join(workdir, f"{model}-{name}.llmcx")
    text = MODELS[model] + TRAIN.format(steps=STEPS)
    text += f"""
[parallel]
devices = "cpu"
dp = {dp}
cp = {cp}
tp = {tp}

[checkpoint]
dir = "{ckpt}"
"""
    with open(toml, "w") as f:
        f.write(text)
    subprocess.run(["rm", "-rf", ckpt, metrics], check=True)
    start = time.time()
    done = subprocess.run([llmc, "train", toml, f"--metrics={metrics}",
                           "-o", artifact], capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise RuntimeError(f"llmc train {toml} failed")
    shown = subprocess.run([llmc, "inspect", artifact], capture_output=True,
                           text=True, check=True).stdout
    axes = [f"{a}={n}" for a, n in (("dp", dp), ("cp", cp), ("tp", tp))
            if n > 1]
    if axes and f"mesh {{{', '.join(axes)}}}" not in shown:
        raise RuntimeError(f"{artifact} does not run on mesh {axes}:\n{shown}")
    with open(metrics) as f:
        steps = [json.loads(line) for line in f]
    step_dir = os.path.join(ckpt, f"step-{STEPS:08d}")
    params = load_safetensors(os.path.join(step_dir, "model.safetensors"))
    moments = load_safetensors(os.path.join(step_dir, "optimizer.safetensors"))
    return steps, params, moments, time.time() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llmc", required=True)
    parser.add_argument("--llmc-run")
    parser.add_argument("--examples")
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--meshes", default="",
                        help="comma-separated model:name pairs (default: all)")
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    wanted = [m for m in args.meshes.split(",") if m]
    failures = 0
    bases = {}
    print(f"{'model':6} {'mesh':10} {'loss':>9} {'grad_norm':>9} "
          f"{'params':>9} {'moments':>9}  worst tensor  (tolerances: losses "
          f"{LOSS_TOL:g}, tensors {PARAM_TOL:g})")
    for model, name, dp, cp, tp in MESHES:
        if wanted and f"{model}:{name}" not in wanted:
            continue
        if model not in bases:
            bases[model] = run(args.llmc, args.workdir, model, "single", 1, 1, 1)
        base = bases[model]
        steps, params, moments, seconds = run(args.llmc, args.workdir, model,
                                              name, dp, cp, tp)
        loss = worst_step(base[0], steps, "loss")
        norm = worst_step(base[0], steps, "grad_norm")
        p, pname = worst_tensor(base[1], params)
        m, mname = worst_tensor(base[2], moments)
        ok = (len(steps) == STEPS and loss <= LOSS_TOL and norm <= LOSS_TOL
              and p <= PARAM_TOL and m <= PARAM_TOL)
        failures += not ok
        print(f"{model:6} {name:10} {loss:9.2e} {norm:9.2e} {p:9.2e} "
              f"{m:9.2e}  {pname if p >= m else mname}  "
              f"{'ok' if ok else 'FAIL'} ({seconds:.1f} s; one device "
              f"{base[3]:.1f} s)", flush=True)
    if failures:
        print(f"{failures} mesh(es) do not match the single-device run")
        return 1
    print("every mesh matches the single-device run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
