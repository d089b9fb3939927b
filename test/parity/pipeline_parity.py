#!/usr/bin/env python3
"""Pipeline-parallel training against the single-device run, on CPU devices.

GPT-2 tiny with 4 layers (so that pp = 4 gives every stage one layer; its
embedding is tied to the head, so the first and the last stage both use
it), GPT-2 tiny with 8 layers (pp = 4 interleaved with 2 model chunks per
stage needs 8) and LLaMA tiny with 4 layers (untied head, RMSNorm, RoPE,
grouped-query attention) train 10 AdamW steps with 4 microbatches on one
device (gradient accumulation over the 4 microbatches: the reference) and
under each pipeline of RUNS, from the same initial parameters and data.
Checked per run, as test/parity/sharding_parity.py does (its helpers):

  losses      |loss_pp(t) - loss_1(t)| / |loss_1(t)|   <= 1e-5 at every step
  grad norms  the same, <= 1e-5 (the global norm sums squares over stages)
  parameters  ||p_pp - p_1|| / ||p_1||                   <= 1e-4 per tensor
  moments     the same for AdamW's m and v, <= 1e-4 per tensor

Why these tolerances: a pipeline runs the very ops of the one-device
program, each on one stage; what may differ is the order in which some
float32 sums are added (the tied embedding's two gradient contributions,
the global gradient norm's per-tensor sums, dp and tp reductions in the
dp2 x tp2 x pp2 run), i.e. a few units of float32 roundoff (6e-8) per step.
The bounds are those of sharding_parity.py for the same reason, and the
attention key bias is left out of the tensor comparison for the reason its
docstring gives.

dp2 x pp2 with ZeRO-1 checks that a stage's buffers hold only what that
stage binds: there an output of one stage once sat in the buffer of an
argument only the other stage reads, and feeding that argument back
overwrote it (parameters 1.4 relative off after one step).

Exit status 0 when every run passes; the table says what was measured.
"""
import argparse
import json
import os
import subprocess
import sys
import time

from sharding_parity import (LOSS_TOL, PARAM_TOL, STEPS, load_safetensors,
                             worst_step, worst_tensor)

MICROBATCHES = 4

GPT2 = """
[model]
family = "gpt2"
vocab_size = 128
layers = {layers}
width = 64
heads = 4
max_positions = 32
"""

LLAMA = """
[model]
family = "llama"
vocab_size = 256
layers = {layers}
width = 64
heads = 8
kv_heads = 4
ffn_width = 176
norm_eps = 1e-6
rope_theta = 10000.0
"""

MODELS = {
    "gpt2-4": GPT2.format(layers=4),
    "gpt2-8": GPT2.format(layers=8),
    "llama-4": LLAMA.format(layers=4),
}

TRAIN = """
[train]
batch_size = 8
seq_len = 16
steps = {steps}
learning_rate = 1e-3
warmup_steps = 2
grad_clip = 1.0
microbatches = {microbatches}
log_every = 1
"""

# (model, name, pp, dp, tp, schedule, virtual stages[, ZeRO stage])
RUNS = [
    ("gpt2-4", "pp2 1f1b", 2, 1, 1, "1f1b", 1),
    ("gpt2-4", "pp2 gpipe", 2, 1, 1, "gpipe", 1),
    ("gpt2-4", "pp4 1f1b", 4, 1, 1, "1f1b", 1),
    ("gpt2-4", "pp4 gpipe", 4, 1, 1, "gpipe", 1),
    ("gpt2-4", "pp2 interleaved v2", 2, 1, 1, "interleaved", 2),
    ("gpt2-4", "dp2xtp2xpp2 1f1b", 2, 2, 2, "1f1b", 1),
    ("gpt2-4", "dp2xpp2+zero1 1f1b", 2, 2, 1, "1f1b", 1, 1),
    ("gpt2-8", "pp4 interleaved v2", 4, 1, 1, "interleaved", 2),
    ("llama-4", "pp2 1f1b", 2, 1, 1, "1f1b", 1),
    ("llama-4", "pp4 1f1b", 4, 1, 1, "1f1b", 1),
    ("llama-4", "dp2xtp2xpp2 gpipe", 2, 2, 2, "gpipe", 1),
]


def run(llmc, workdir, model, name, pp, dp, tp, schedule, virtual, zero=0):
    tag = model + "-" + name.replace(" ", "_")
    toml = os.path.join(workdir, f"{tag}.toml")
    ckpt = os.path.join(workdir, f"{tag}-ckpt")
    metrics = os.path.join(workdir, f"{tag}.jsonl")
    text = MODELS[model] + TRAIN.format(steps=STEPS, microbatches=MICROBATCHES)
    text += (f'\n[parallel]\ndevices = "cpu"\ndp = {dp}\ntp = {tp}\npp = {pp}\n'
             f'zero = {zero}\n')
    if pp > 1:
        text += f'pipeline_schedule = "{schedule}"\nvirtual_stages = {virtual}\n'
    text += f'\n[checkpoint]\ndir = "{ckpt}"\n'
    with open(toml, "w") as f:
        f.write(text)
    artifact = os.path.join(workdir, f"{tag}.llmcx")
    subprocess.run(["rm", "-rf", ckpt, metrics], check=True)
    start = time.time()
    done = subprocess.run([llmc, "train", toml, f"--metrics={metrics}",
                           "-o", artifact], capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise RuntimeError(f"llmc train {toml} failed")
    # The program that trained really has a pp axis (one program per rank).
    shown = subprocess.run([llmc, "inspect", artifact], capture_output=True,
                           text=True, check=True).stdout
    if pp > 1 and f"pp={pp}" not in shown:
        raise RuntimeError(f"{artifact} does not run on a pp={pp} mesh:\n{shown}")
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
    parser.add_argument("--runs", default="",
                        help="comma-separated names of RUNS (default: all)")
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    wanted = [r for r in args.runs.split(",") if r]
    bases = {}
    failures = 0
    print(f"{'model':8} {'run':22} {'loss':>9} {'grad_norm':>9} {'params':>9} "
          f"{'moments':>9}  worst tensor  (tolerances: losses {LOSS_TOL:g}, "
          f"tensors {PARAM_TOL:g}; reference: one device, {MICROBATCHES} "
          f"microbatches)")
    for model, name, pp, dp, tp, schedule, virtual, *zero in RUNS:
        if wanted and name not in wanted:
            continue
        if model not in bases:
            bases[model] = run(args.llmc, args.workdir, model, "single", 1, 1,
                               1, "1f1b", 1)
        base = bases[model]
        steps, params, moments, seconds = run(args.llmc, args.workdir, model,
                                              name, pp, dp, tp, schedule,
                                              virtual, *zero)
        loss = worst_step(base[0], steps, "loss")
        norm = worst_step(base[0], steps, "grad_norm")
        p, pname = worst_tensor(base[1], params)
        m, mname = worst_tensor(base[2], moments)
        ok = (len(steps) == STEPS and loss <= LOSS_TOL and
              norm <= LOSS_TOL and p <= PARAM_TOL and m <= PARAM_TOL)
        failures += not ok
        print(f"{model:8} {name:22} {loss:9.2e} {norm:9.2e} {p:9.2e} {m:9.2e}  "
              f"{pname if p >= m else mname}  {'ok' if ok else 'FAIL'} "
              f"({seconds:.1f} s)", flush=True)
    if failures:
        print(f"{failures} run(s) do not match the single-device run")
        return 1
    print("every pipeline matches the single-device run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
