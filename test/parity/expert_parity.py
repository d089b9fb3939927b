#!/usr/bin/env python3
"""Expert parallelism against the single-device run, on CPU virtual devices.

A tiny mixture of experts (8 experts, top-2, 2 layers, balancing loss on)
trains 10 AdamW steps on one device and under each mesh of MESHES (ep2, ep4,
dp2 x ep2, ep2 x tp2, ep2 with 2 microbatches against one device
accumulating the same 2, and dp2 x ep2 with ZeRO-3), from the same initial
parameters and data.
Checked per mesh, with sharding_parity.py's measures and tolerances:

  losses      |loss_mesh(t) - loss_1(t)| / |loss_1(t)|   <= 1e-5 at every step
  grad norms  the same, <= 1e-5
  parameters  ||p_mesh - p_1|| / ||p_1||                   <= 1e-4 per tensor
  moments     the same for AdamW's m and v, <= 1e-4 per tensor

and that the trained program really exchanges tokens by all-to-all over ep
(`llmc compile --emit=llmc-partition` has 2 all-to-alls per layer forward).

Why these tolerances: as for dp and tp, the mesh adds the same float32
numbers in another order (the balancing statistics, the cross-entropy and
the non-expert gradients are sums over the ranks that split the tokens; the
expert gradients sums over dp), a few float32 roundoffs per step.

Capacity (docs/sharding.md, "Expert parallelism"): under a mesh each rank
dispatches its own tokens into capacity / (dp x ep) slots per expert, so the
mesh drops the same tokens as one device only when no expert overflows.
capacity_factor = experts / k = 4 makes the capacity the whole microbatch, so
nothing is dropped on either side and parity is exact up to roundoff; with
drops the two runs differ by design, and this test does not claim otherwise.

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

MODEL = """
[model]
family = "moe"
vocab_size = 256
layers = 2
width = 64
heads = 4
kv_heads = 2
ffn_width = 96
experts = 8
experts_per_token = 2
capacity_factor = 4.0
aux_loss_weight = 0.01
"""

TRAIN = """
[train]
batch_size = 8
seq_len = 16
steps = {steps}
microbatches = {microbatches}
learning_rate = 1e-3
warmup_steps = 2
log_every = 1
"""

# (name, dp, ep, tp, zero, microbatches); a mesh with microbatches is
# compared with one device accumulating the same microbatches.
MESHES = [
    ("ep2", 1, 2, 1, 0, 1),
    ("ep4", 1, 4, 1, 0, 1),
    ("dp2xep2", 2, 2, 1, 0, 1),
    ("ep2xtp2", 1, 2, 2, 0, 1),
    ("ep2 mb=2", 1, 2, 1, 0, 2),
    ("dp2xep2+zero3", 2, 2, 1, 3, 1),
]


def write_toml(workdir, tag, dp, ep, tp, zero, microbatches):
    tag = tag.replace(" ", "_").replace("=", "").replace("+", "_")
    toml = os.path.join(workdir, f"moe-{tag}.toml")
    ckpt = os.path.join(workdir, f"moe-{tag}-ckpt")
    with open(toml, "w") as f:
        f.write(MODEL + TRAIN.format(steps=STEPS, microbatches=microbatches) + f"""
[parallel]
devices = "cpu"
dp = {dp}
ep = {ep}
tp = {tp}
zero = {zero}

[checkpoint]
dir = "{ckpt}"
""")
    return toml, ckpt


def all_to_alls(llmc, toml):
    """The reasons of the all-to-alls of the partitioned program."""
    done = subprocess.run([llmc, "compile", toml, "--emit=llmc-partition"],
                          capture_output=True, text=True, check=True)
    reasons = []
    for line in done.stdout.splitlines():
        if "shard.all_to_all" in line:
            start = line.index('llmc.reason = "') + len('llmc.reason = "')
            reasons.append(line[start:line.index('"', start)])
    return reasons


def run(llmc, workdir, tag, dp, ep, tp, zero, microbatches):
    toml, ckpt = write_toml(workdir, tag, dp, ep, tp, zero, microbatches)
    metrics = toml[:-len(".toml")] + ".jsonl"
    subprocess.run(["rm", "-rf", ckpt, metrics], check=True)
    start = time.time()
    done = subprocess.run([llmc, "train", toml, f"--metrics={metrics}"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise RuntimeError(f"llmc train {toml} failed")
    with open(metrics) as f:
        steps = [json.loads(line) for line in f]
    step_dir = os.path.join(ckpt, f"step-{STEPS:08d}")
    params = load_safetensors(os.path.join(step_dir, "model.safetensors"))
    moments = load_safetensors(os.path.join(step_dir, "optimizer.safetensors"))
    return toml, steps, params, moments, time.time() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llmc", required=True)
    parser.add_argument("--llmc-run")
    parser.add_argument("--examples")
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--meshes", default="",
                        help="comma-separated names of MESHES (default: all)")
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    wanted = [m for m in args.meshes.split(",") if m]
    bases = {}
    failures = 0
    print(f"{'mesh':14} {'loss':>9} {'grad_norm':>9} {'params':>9} "
          f"{'moments':>9} {'a2a':>4}  worst tensor  (tolerances: losses "
          f"{LOSS_TOL:g}, tensors {PARAM_TOL:g})")
    for name, dp, ep, tp, zero, micro in MESHES:
        if wanted and name not in wanted:
            continue
        if micro not in bases:
            bases[micro] = run(args.llmc, args.workdir, f"single{micro}",
                               1, 1, 1, 0, micro)[1:]
        base = bases[micro]
        toml, steps, params, moments, seconds = run(
            args.llmc, args.workdir, name, dp, ep, tp, zero, micro)
        loss = worst_step(base[0], steps, "loss")
        norm = worst_step(base[0], steps, "grad_norm")
        p, pname = worst_tensor(base[1], params)
        m, mname = worst_tensor(base[2], moments)
        reasons = all_to_alls(args.llmc, toml)
        # 2 layers: dispatch and combine forward, per layer and microbatch.
        forward = [r for r in reasons if r.endswith("(forward)")]
        routed = (len(forward) == 4 * micro and
                  sum("moe dispatch" in r for r in forward) == 2 * micro and
                  all("over ep" in r for r in reasons))
        ok = (len(steps) == STEPS and loss <= LOSS_TOL and
              norm <= LOSS_TOL and p <= PARAM_TOL and m <= PARAM_TOL and
              routed)
        failures += not ok
        print(f"{name:14} {loss:9.2e} {norm:9.2e} {p:9.2e} {m:9.2e} "
              f"{len(reasons):4}  {pname if p >= m else mname}  "
              f"{'ok' if ok else 'FAIL'} ({seconds:.1f} s)", flush=True)
        if not routed:
            print("   expected 2 all-to-alls over ep per layer forward, got: " +
                  "; ".join(reasons))
    if failures:
        print(f"{failures} mesh(es) do not match the single-device run")
        return 1
    print("every mesh matches the single-device run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
