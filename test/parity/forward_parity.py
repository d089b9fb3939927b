#!/usr/bin/env python3
"""Forward-loss parity of llmc with an independent JAX implementation.

For each run description (examples/gpt2-tiny.toml, llama-tiny.toml,
moe-tiny.toml) this script draws weights and a batch, writes them as
safetensors, compiles the model with `llmc compile RUN.toml -o model.llmcx`,
runs it with `llmc-run model.llmcx --weights W --inputs B`, and compares the
loss llmc prints with the loss of test/parity/jax_models.py in float32:

    |loss_llmc - loss_jax32| / |loss_jax32| < 1e-5

Why 1e-5 (float32): the unit roundoff of f32 is 2^-24 = 6e-8. The loss is a
chain of a few dozen reductions (matmuls over at most a few hundred terms,
softmaxes, a logsumexp over the vocabulary, the mean over the batch) whose
rounding errors mostly cancel; JAX's own f32 loss differs from its f64 loss
by about 1e-7 relative on these models (printed below). Two correct f32
implementations that sum in different orders (blocked matmuls, another
softmax or logsumexp form) therefore agree to a few times 1e-7; 1e-5 leaves
them a margin of more than 10x. It is still tight enough to catch any wrong
convention: the script checks that each deliberate mistake listed in
jax_models.MUTATIONS (rope layout, GQA head mapping, attention scale, norm
epsilon, expert capacity, ...) moves the JAX loss by at least 5 times the
tolerance on the very same weights and batch, and fails when one does not
(the inputs would then be too weak to see that mistake). 5x: such a mistake
in llmc would miss the tolerance by a wide margin, given that correct
implementations agree to ~1e-7; the smallest moves (unnormalized top-k
weights, balancing counts taken after dropping) are 1e-4 to 3e-4 here and
stay above 5e-5 for every seed from 0 to 7 as well.

The weights are not normal(0.02): with such small weights attention is
almost uniform and a wrong rope layout changes the loss by ~2e-6, below the
tolerance. Matrices are drawn normal with std 1/sqrt(fan_in) (activations of
unit size: attention scores, router logits and MLP inputs of order 1), norm
weights 1 + normal(0.1), biases normal(0.1). The batch is uniform random ids.

Exit status: 0 when every model agrees, 1 otherwise (each failure says why),
2 for bad usage.
"""

import argparse
import math
import os
import re
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from safetensors.numpy import save_file  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import jax_models  # noqa: E402

jax.config.update("jax_enable_x64", False)  # f32 unless asked otherwise
jax.config.update("jax_default_matmul_precision", "highest")

TOLERANCE = 1e-5  # relative, f32; see the module docstring
SENSITIVITY = 5 * TOLERANCE  # least relative change a mutation must cause
MODELS = ("gpt2-tiny", "llama-tiny", "moe-tiny")
REPO = Path(__file__).resolve().parents[2]


def draw_weights(cfg, rng):
    """{name: float32 array} for every parameter of cfg's model."""
    weights = {}
    for name, shape in jax_models.parameter_shapes(cfg).items():
        if len(shape) == 1:
            if name.endswith(".bias"):
                w = 0.1 * rng.standard_normal(shape)
            else:  # a norm's scale
                w = 1.0 + 0.1 * rng.standard_normal(shape)
        else:
            # GPT-2's Conv1D is [in, out]; embeddings and torch.nn.Linear
            # weights are [rows, in] (an embedding's "in" is its width, as a
            # tied head reads it).
            conv1d = name.startswith("transformer.h.")
            fan_in = shape[0] if conv1d else shape[1]
            w = rng.standard_normal(shape) / math.sqrt(fan_in)
        weights[name] = np.ascontiguousarray(w, dtype=np.float32)
    return weights


def draw_batch(cfg, rng):
    shape = (cfg.batch_size, cfg.seq_len)
    tokens = rng.integers(0, cfg.vocab_size, shape, dtype=np.int32)
    targets = rng.integers(0, cfg.vocab_size, shape, dtype=np.int32)
    return tokens, targets


def run(command, what):
    """Runs command; returns (stdout, None) or (None, the reason it failed)."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    except FileNotFoundError:
        return None, f"{what}: {command[0]} not found"
    except subprocess.TimeoutExpired:
        return None, f"{what}: timed out after 300 s: {' '.join(map(str, command))}"
    if done.returncode != 0:
        return None, (f"{what} exited with {done.returncode}: {' '.join(map(str, command))}\n"
                      f"{done.stdout}{done.stderr}".rstrip())
    return done.stdout, None


def llmc_loss(args, toml, weights_path, inputs_path, workdir):
    """Compiles and runs the model with llmc; returns (loss, None) or
    (None, reason)."""
    executable = workdir / "model.llmcx"
    _, error = run([args.llmc, "compile", str(toml), "--forward", "-o", str(executable)],
                   "llmc compile")
    if error:
        return None, error
    out, error = run([args.llmc_run, str(executable), "--weights", str(weights_path),
                      "--inputs", str(inputs_path)], "llmc-run")
    if error:
        return None, error
    # llmc-run prints one line per output: `<name> = <value>`.
    found = re.findall(r"^\s*loss\s*=\s*(\S+)\s*$", out, re.MULTILINE)
    if len(found) != 1:
        return None, f"llmc-run printed no single `loss = <value>` line:\n{out.rstrip()}"
    try:
        return float(found[0]), None
    except ValueError:
        return None, f"llmc-run printed a loss that is not a number: {found[0]!r}"


def jax_loss(cfg, weights, tokens, targets, dtype, mutation=""):
    loss = jax_models.loss_fn(cfg, mutation)
    params = {name: jnp.asarray(w, dtype) for name, w in weights.items()}
    return float(loss(params, jnp.asarray(tokens), jnp.asarray(targets)))


def relative(a, b):
    return abs(a - b) / abs(b)


def check_model(args, name, seed):
    """Returns the list of failures (empty when the model agrees)."""
    toml = Path(args.examples) / f"{name}.toml"
    with open(toml, "rb") as f:
        run_description = tomllib.load(f)
    if "hf_config" in run_description.get("model", {}):
        return [f"{name}: hf_config run descriptions are not supported by this test"]
    cfg = jax_models.Config.from_run_description(run_description)
    rng = np.random.default_rng(seed)
    weights = draw_weights(cfg, rng)
    tokens, targets = draw_batch(cfg, rng)
    workdir = Path(args.workdir) / name
    workdir.mkdir(parents=True, exist_ok=True)
    weights_path, inputs_path = workdir / "weights.safetensors", workdir / "inputs.safetensors"
    save_file(weights, str(weights_path))
    save_file({"tokens": tokens, "targets": targets}, str(inputs_path))

    count = sum(w.size for w in weights.values())
    print(f"\n== {name}: {cfg.family}, {count:,} parameters, batch {cfg.batch_size}x{cfg.seq_len},"
          f" seed {seed} ({toml})")
    failures = []
    start = time.monotonic()
    jax32 = jax_loss(cfg, weights, tokens, targets, jnp.float32)
    with jax.enable_x64(True):
        jax64 = jax_loss(cfg, weights, tokens, targets, jnp.float64)
    rows = [("jax f32", jax32, "reference"),
            ("jax f64", jax64, f"{relative(jax32, jax64):.2e} from f64 (f32 rounding)")]

    if not args.jax_only:
        llmc, error = llmc_loss(args, toml, weights_path, inputs_path, workdir)
        if error:
            failures.append(f"{name}: {error}")
            rows.append(("llmc", None, "no result"))
        else:
            err = relative(llmc, jax32)
            verdict = "ok" if err < TOLERANCE else "FAIL"
            rows.append(("llmc", llmc, f"{err:.2e} from jax f32 (< {TOLERANCE:.0e}: {verdict});"
                                       f" {relative(llmc, jax64):.2e} from f64"))
            if not err < TOLERANCE:
                failures.append(f"{name}: llmc loss {llmc:.9g} differs from JAX's {jax32:.9g} by "
                                f"{err:.2e} relative (tolerance {TOLERANCE:.0e})")

    if cfg.family == "moe":
        _, routing = jax_models.llama_loss(
            {n: jnp.asarray(w) for n, w in weights.items()}, tokens, targets, cfg, with_stats=True)
        capacity = jax_models.expert_capacity(cfg, cfg.batch_size * cfg.seq_len)
        for layer, stats in enumerate(routing):
            pairs = " ".join(str(int(c)) for c in stats["pairs_per_expert"])
            print(f"   layer {layer}: pairs per expert [{pairs}], capacity {capacity},"
                  f" {int(stats['dropped_pairs'])} dropped")

    for mutation, meaning in jax_models.MUTATIONS[cfg.family].items():
        changed = jax_loss(cfg, weights, tokens, targets, jnp.float32, mutation)
        moved = relative(changed, jax32)
        verdict = "seen" if moved >= SENSITIVITY else "TOO WEAK"
        rows.append((f"({mutation})", changed, f"{moved:.2e} from jax f32 ({verdict})"))
        if moved < SENSITIVITY:
            failures.append(f"{name}: the inputs cannot tell a wrong model from the right one: "
                            f"'{mutation}' ({meaning}) moves the loss by only {moved:.2e} "
                            f"relative, less than {SENSITIVITY:.0e}")

    width = max(len(r[0]) for r in rows)
    for label, value, note in rows:
        shown = f"{value:.9g}" if value is not None else "-"
        print(f"   {label:<{width}}  {shown:>12}  {note}")
    print(f"   {'ok' if not failures else 'FAILED'} in {time.monotonic() - start:.1f} s")
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--llmc", default=str(REPO / "build/bin/llmc"), help="the llmc binary")
    parser.add_argument("--llmc-run", default=str(REPO / "build/bin/llmc-run"),
                        help="the llmc-run binary")
    parser.add_argument("--examples", default=str(REPO / "examples"),
                        help="folder of the run descriptions " + ", ".join(f"{m}.toml" for m in MODELS))
    parser.add_argument("--workdir", help="where to write weights, batches and executables "
                        "(default: a temporary folder, removed at the end)")
    parser.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    parser.add_argument("--seed", type=int, default=20240917, help="seed of weights and batch")
    parser.add_argument("--jax-only", action="store_true",
                        help="check the JAX models and the inputs' sensitivity only; no llmc")
    args = parser.parse_args()

    print(f"JAX {jax.__version__} on {jax.devices()[0].platform}, numpy {np.__version__};"
          f" tolerance {TOLERANCE:.0e} relative (f32), mutations must move the loss by"
          f" >= {SENSITIVITY:.0e}")
    with tempfile.TemporaryDirectory(prefix="llmc-parity-") as scratch:
        if args.workdir is None:
            args.workdir = scratch
        failures = []
        for index, name in enumerate(args.models):
            failures += check_model(args, name, args.seed + index)
    if failures:
        print(f"\nFAILED ({len(failures)}):", file=sys.stderr)
        for failure in failures:
            print(f"- {failure}", file=sys.stderr)
        return 1
    what = "JAX models and inputs" if args.jax_only else "llmc agrees with JAX"
    print(f"\nok: {what} ({', '.join(args.models)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
