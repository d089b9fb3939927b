#!/usr/bin/env python3
"""Training parity of llmc with an independent JAX implementation.

For each run description (examples/gpt2-tiny.toml, llama-tiny.toml,
moe-tiny.toml) this script checks two things against JAX in float32:

(a) the gradient of every parameter at the initial weights, on the first
    batch: `llmc compile RUN.toml --emit=llmc-autodiff -o grads.llmcx`, then
    `llmc-run grads.llmcx --weights W --inputs B --save-outputs G`, whose
    outputs are `loss` and `grad.<parameter>`. Per tensor:

        ||g_llmc - g_jax32|| / ||g_jax32|| < 1e-4      (L2 norms)

(b) the losses of 20 AdamW steps: `llmc compile RUN.toml -o train.llmcx`,
    then `llmc-run train.llmcx --weights W --metrics M.jsonl`, which trains
    on the token file of the run description and writes one JSON line per
    step. Per step t = 1..20:

        |loss_llmc(t) - loss_jax32(t)| / |loss_jax32(t)| < 1e-4

    and also, at every step, `grad_norm` (< 1e-4 relative: a function of the
    gradients, which follow the parameters as the loss does) and `lr`
    (< 1e-6 relative: host arithmetic of the step number).

The run description is a copy of the example with the model, batch_size,
seq_len and microbatches kept and the [train] and [data] keys set here
(TRAIN, GRAD_CLIP; log_every = 1):
peak lr 1e-3 down to 1e-4 by cosine after 3 warmup steps, AdamW (0.9,
0.95, 1e-8, weight decay 0.1) and a gradient clip chosen per model so that
some steps clip and some do not (the table prints which). The data is an
llm.c token shard of uniform random ids, one batch short of 20 steps, so the
last step's batch wraps to the start of the file: the loader's wrap rule is
part of what is compared.

Why these tolerances (float32, unit roundoff 6e-8). `--jax-only` measures
JAX's own f32 results against f64 ones computed by the same code (measured
with JAX 0.10.2 on the CPU, seeds 20240917 + model index):

    model       gradients     losses        grad_norm     finite        steps
                (worst        (worst step,  (worst step,  differences   that
                tensor)       20 steps)     20 steps)     (f64)         clip
    gpt2-tiny   8.6e-07       1.3e-07       1.7e-07       6.1e-10       7 of 20
    llama-tiny  1.6e-06       1.8e-07       6.3e-07       6.9e-09       9 of 20
    moe-tiny    1.2e-06       2.6e-07       1.8e-07       4.0e-09       7 of 20

(moe-tiny: smallest top-2 router gap along the trajectory 1.0e-04, largest
f32-f64 router logit difference 5.9e-06.)

Gradients: a correct f32 implementation that sums in another order is off
from the exact gradient by about as much as JAX's f32 is (a few 1e-6 at
most, in the tensors whose gradient is smallest relative to the terms that
cancel in it), so two of them agree to ~1e-5; 1e-4 leaves a margin of 10x
while a wrong derivative rule (a missing term, a transposed operand, a wrong
scale) changes a tensor's gradient by O(1). The relative L2 error per
tensor, not an elementwise one: elements of a gradient that cancel to near
zero carry only rounding noise, and an elementwise relative error on them
would measure the noise. The smallest gradient norm is printed: here every
tensor's is more than 2e-2 of the largest one's, so no tensor is all noise.

Losses: 20 steps of AdamW carry rounding differences along: Adam divides
each gradient by its own running RMS, so an element whose gradient is small
still moves by ~lr, in a direction rounding may decide. JAX's f32 losses
stay within 3e-7 of the f64 ones, so two correct f32 implementations stay
within ~1e-6 of each other; 1e-4 leaves a wide margin (wider than the
forward test's 1e-5, because errors compound over steps and accumulate over
microbatches in another order). A wrong optimizer convention moves the
losses by far more: the script checks that each deliberate mistake of
OPTIMIZER_MUTATIONS moves some step's loss by at least 3x the tolerance on
these weights and data, and fails when one does not. 3x, not the forward
test's 5x: decay on every tensor (biases, norms, embeddings) moves GPT-2's
losses by only 3.3e-4 with weight decay 0.1 and lr <= 1e-3 over 20 steps;
that is still 1000x the measured rounding drift. (eps inside the square
root, m / sqrt(v + eps), moves them by 6e-5 and is not listed: epsilon 1e-8
matters only for gradient elements below 1e-4.) A wrong accumulation over
microbatches (a sum instead of a mean) leaves Adam's update almost
unchanged but doubles grad_norm, which is compared at every step.

For the MoE model, a top-k choice that is almost a tie could flip between
two correct implementations and move the loss from that step on by more
than rounding. The script prints the smallest gap between the k-th and the
(k+1)-th router logit along the trajectory next to the largest difference
of JAX's f32 and f64 logits (1e-4 vs 6e-6, above), and a failing MoE loss
says so.

The weights are those of forward_parity.py (std 1/sqrt(fan_in), norm
weights 1 + normal(0.1), biases normal(0.1)), not normal(0.02): with
weights of that size attention is almost uniform, the gradients of the
attention projections are tiny and many conventions go unseen. The batch
of (a) is the first batch of the token file, the one of step 1.

`--jax-only` runs only the JAX side and checks it: f32 against f64
gradients (worst relative L2 error per tensor, required < 1e-5, a tenth of
the tolerance),
central finite differences in f64 of a few gradient elements (h = 1e-5;
|fd - g| / max|g| of the tensor < 1e-6: truncation h^2 f''' ~ 1e-10 and
cancellation 1e-16 * loss / h ~ 1e-10 relative to gradients of order 1e-2),
the 20-step f32 and f64 loss curves (required < 1e-5), and the
sensitivity to the optimizer mutations.

Exit status: 0 when every model agrees, 1 otherwise (each failure says why),
2 for bad usage.
"""

import argparse
import dataclasses
import json
import math
import os
import sys
import tempfile
import time
import tomllib
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from safetensors.numpy import load_file, save_file  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import forward_parity  # noqa: E402  (the weights, running commands)
import jax_models  # noqa: E402

jax.config.update("jax_enable_x64", False)  # f32 unless asked otherwise
jax.config.update("jax_default_matmul_precision", "highest")

GRAD_TOLERANCE = 1e-4  # relative L2 per tensor, f32; see the module docstring
LOSS_TOLERANCE = 1e-4  # relative per step, f32, also for grad_norm
LR_TOLERANCE = 1e-6  # relative: the schedule is host arithmetic, f32 at worst
SENSITIVITY = 3 * LOSS_TOLERANCE  # least change an optimizer mutation must cause
FD_STEP = 1e-5  # central finite differences in f64
FD_TOLERANCE = 1e-6  # |fd - g| / max|g| of the tensor
# Variants: an example with some [model] keys replaced. The vocabularies
# here are not multiples of 64, so llmc's classifier runs at the padded
# width (128, 256) with the padded columns masked (frontend/models/
# Layers.h, classifier) while JAX computes at the true one: the tied head
# (GPT-2) and the untied one (LLaMA) must train the same.
VARIANTS = {
    "gpt2-tiny-vocab120": ("gpt2-tiny", {"vocab_size": 120}),
    "llama-tiny-vocab200": ("llama-tiny", {"vocab_size": 200}),
}
MODELS = forward_parity.MODELS + tuple(VARIANTS)
REPO = forward_parity.REPO
SHARD_MAGIC, SHARD_VERSION = 20240520, 1

# [train] keys of the test's run descriptions (batch_size, seq_len and
# microbatches stay those of the example). grad_clip is per model, between
# the gradient norms of early and late steps, so that both branches of the
# clip run (the table prints the steps that clip).
TRAIN = {
    "steps": 20,
    "learning_rate": 1e-3,
    "min_learning_rate": 1e-4,
    "warmup_steps": 3,
    "schedule": "cosine",
    "weight_decay": 0.1,
    "beta1": 0.9,
    "beta2": 0.95,
    "epsilon": 1e-8,
}
GRAD_CLIP = {"gpt2-tiny": 4.0, "llama-tiny": 3.3, "moe-tiny": 2.9,
             "gpt2-tiny-vocab120": 4.0, "llama-tiny-vocab200": 3.3}

# Deliberately wrong optimizers: name -> what it changes. Each must move
# the loss curve by SENSITIVITY, or the data cannot tell it from the right one.
OPTIMIZER_MUTATIONS = {
    "no_bias_correction": "m and v used without dividing by 1 - beta^t",
    "decay_all": "weight decay on every tensor (biases, norms, embeddings too)",
    "decay_not_lr_scaled": "p -= lr * update + wd * p (decay not scaled by lr)",
    "no_clip": "gradients never clipped",
    "lr_next_step": "step t uses the learning rate of step t + 1",
    "loss_after_update": "the reported loss is the one after the update",
}


@dataclasses.dataclass(frozen=True)
class Train:
    """The optimizer and schedule of the test's run descriptions."""

    steps: int
    learning_rate: float
    min_learning_rate: float
    warmup_steps: int
    schedule: str
    weight_decay: float
    beta1: float
    beta2: float
    epsilon: float
    grad_clip: float
    microbatches: int


def learning_rate(train, t, mutation=""):
    """The learning rate of step t (1-based) from the [train] keys of
    docs/run-description.md: linear warmup from 0 over warmup_steps, then
    cosine or linear decay to min_learning_rate at the last step."""
    if mutation == "lr_next_step":
        t += 1
    peak, low, warmup = train.learning_rate, train.min_learning_rate, train.warmup_steps
    if warmup > 0 and t <= warmup:
        return peak * t / warmup
    progress = min(max((t - warmup) / (train.steps - warmup), 0.0), 1.0)
    if train.schedule == "cosine":
        return low + 0.5 * (1.0 + math.cos(math.pi * progress)) * (peak - low)
    if train.schedule == "linear":
        return peak - (peak - low) * progress
    return peak


def decays(name, shape, mutation=""):
    """Whether AdamW's weight decay applies to the parameter."""
    if mutation == "decay_all":
        return True
    return len(shape) >= 2 and not any(s in name for s in ("wte", "wpe", "embed_tokens"))


# --- Data ----------------------------------------------------------------------


def write_shard(path, tokens):
    """An llm.c token shard: 256 int32 header words, then uint16 tokens."""
    header = np.zeros(256, dtype="<i4")
    header[0], header[1], header[2] = SHARD_MAGIC, SHARD_VERSION, len(tokens)
    with open(path, "wb") as f:
        f.write(header.tobytes())
        f.write(np.asarray(tokens, dtype="<u2").tobytes())


def batches(tokens, B, T, steps):
    """The batches of steps 1..steps, as the loader reads them: a batch
    reads tokens[pos : pos + B*T + 1] (inputs the first B*T, targets the last
    B*T) and advances pos by B*T; when pos + B*T + 1 passes the end, pos
    goes back to 0 first. Returns [(tokens [B,T], targets [B,T], pos)]."""
    out, pos, n = [], 0, len(tokens)
    for _ in range(steps):
        if pos + B * T + 1 > n:
            pos = 0
        chunk = np.asarray(tokens[pos : pos + B * T + 1], dtype=np.int32)
        out.append((chunk[:-1].reshape(B, T), chunk[1:].reshape(B, T), pos))
        pos += B * T
    return out


# --- JAX training --------------------------------------------------------------


def batch_loss(cfg, microbatches):
    """loss(params, tokens, targets): the mean of the losses of the
    microbatches (rows split in order), as gradient accumulation computes
    it. Equal to the whole batch's loss for GPT-2 and LLaMA (a mean of
    equal-sized means)."""
    model = jax_models.gpt2_loss if cfg.family == "gpt2" else jax_models.llama_loss

    def loss(params, tokens, targets):
        rows = tokens.shape[0] // microbatches
        parts = [model(params, tokens[i * rows:(i + 1) * rows],
                       targets[i * rows:(i + 1) * rows], cfg)
                 for i in range(microbatches)]
        return sum(parts) / microbatches

    return loss


def make_step(cfg, train, mutation=""):
    """The jitted training step (params, m, v, t, lr, tokens, targets) ->
    (loss, grad_norm, clipped, params, m, v), in the dtype of the params."""
    loss = batch_loss(cfg, train.microbatches)
    value_and_grad = jax.value_and_grad(loss)
    b1, b2, eps, wd, clip_at = (train.beta1, train.beta2, train.epsilon, train.weight_decay,
                                train.grad_clip)

    def step(params, m, v, t, lr, tokens, targets):
        value, grads = value_and_grad(params, tokens, targets)
        norm = jnp.sqrt(sum(jnp.sum(jnp.square(g)) for g in grads.values()))
        if clip_at > 0 and mutation != "no_clip":
            clip = jnp.minimum(1.0, clip_at / (norm + 1e-6))
        else:
            clip = jnp.ones_like(norm)
        new_p, new_m, new_v = {}, {}, {}
        for name, p in params.items():
            g = grads[name] * clip
            mi = b1 * m[name] + (1 - b1) * g
            vi = b2 * v[name] + (1 - b2) * jnp.square(g)
            if mutation == "no_bias_correction":
                mhat, vhat = mi, vi
            else:
                mhat, vhat = mi / (1 - b1 ** t), vi / (1 - b2 ** t)
            update = mhat / (jnp.sqrt(vhat) + eps)
            decay = wd if decays(name, p.shape, mutation) else 0.0
            if mutation == "decay_not_lr_scaled":
                new_p[name] = p - lr * update - decay * p
            else:
                new_p[name] = p - lr * (update + decay * p)
            new_m[name], new_v[name] = mi, vi
        return value, norm, clip < 1, new_p, new_m, new_v

    return jax.jit(step)


def jax_train(cfg, train, weights, data, dtype, mutation=""):
    """Trains from weights on data's batches; returns a list of per-step
    dicts {loss, grad_norm, lr, clipped}."""
    step = make_step(cfg, train, mutation)
    params = {n: jnp.asarray(w, dtype) for n, w in weights.items()}
    m = {n: jnp.zeros_like(p) for n, p in params.items()}
    v = {n: jnp.zeros_like(p) for n, p in params.items()}
    loss_only = jax.jit(batch_loss(cfg, train.microbatches))
    log = []
    for t in range(1, train.steps + 1):
        tokens, targets, _ = data[t - 1]
        lr = learning_rate(train, t, mutation)
        loss, norm, clipped, params, m, v = step(params, m, v, jnp.asarray(t, dtype),
                                                 jnp.asarray(lr, dtype), tokens, targets)
        if mutation == "loss_after_update":
            loss = loss_only(params, tokens, targets)
        log.append({"loss": float(loss), "grad_norm": float(norm),
                    "lr": learning_rate(train, t), "clipped": bool(clipped),
                    "params": params if cfg.family == "moe" else None})
    return log


def router_logits(cfg, params, tokens):
    """[layers, B*T, E] router logits of the MoE model, in the params' dtype
    (the MoE forward pass up to each router, then on)."""
    p = params
    B, T = tokens.shape
    x = p["model.embed_tokens.weight"][tokens]
    out_logits = []
    for i in range(cfg.layers):
        n = f"model.layers.{i}."
        h = jax_models.rms_norm(x, p[n + "input_layernorm.weight"], cfg.norm_eps)
        x = x + jax_models.llama_attention(h, p, n + "self_attn.", cfg, "")
        h = jax_models.rms_norm(x, p[n + "post_attention_layernorm.weight"], cfg.norm_eps)
        flat = h.reshape(B * T, -1)
        out_logits.append(np.asarray(flat @ p[n + "block_sparse_moe.gate.weight"].T, np.float64))
        out, _ = jax_models.sparse_moe(flat, p, n + "block_sparse_moe.", cfg, "")
        x = x + out.reshape(B, T, -1)
    return np.stack(out_logits)


def router_ties(cfg, weights, log32, log64, data):
    """(smallest gap between the k-th and the (k+1)-th router logit, largest
    f32-f64 difference of a router logit) over every token, layer and step:
    a top-k choice flips between two correct implementations only when
    their logits differ by about the gap."""
    gap, noise = math.inf, 0.0
    k = cfg.experts_per_token
    for t, (tokens, _, _) in enumerate(data):
        logits = []
        for log, dtype in ((log32, jnp.float32), (log64, jnp.float64)):
            with jax.enable_x64(dtype == jnp.float64):
                params = weights if t == 0 else log[t - 1]["params"]
                logits.append(router_logits(
                    cfg, {n: jnp.asarray(w, dtype) for n, w in params.items()}, tokens))
        top = -np.sort(-logits[0], axis=-1)
        gap = min(gap, float(np.min(top[..., k - 1] - top[..., k])))
        noise = max(noise, float(np.max(np.abs(logits[0] - logits[1]))))
    return gap, noise


def jax_gradients(cfg, train, weights, tokens, targets, dtype):
    loss = jax.jit(jax.value_and_grad(batch_loss(cfg, train.microbatches)))
    value, grads = loss({n: jnp.asarray(w, dtype) for n, w in weights.items()}, tokens, targets)
    return float(value), {n: np.asarray(g, np.float64) for n, g in grads.items()}


def relative_l2(a, b):
    return float(np.linalg.norm(np.asarray(a, np.float64) - b) / np.linalg.norm(b))


def finite_differences(cfg, train, weights, tokens, targets, grads64, rng):
    """Central differences in f64 of a few elements: for four tensors, the
    element of largest |g| and a random one. Returns [(name, index, fd, g,
    error)] with error = |fd - g| / max|g of the tensor|."""
    with jax.enable_x64(True):
        loss = jax.jit(batch_loss(cfg, train.microbatches))
        params = {n: jnp.asarray(w, jnp.float64) for n, w in weights.items()}
        names = sorted(weights)
        picked = [names[int(i)] for i in rng.choice(len(names), 4, replace=False)]
        rows = []
        for name in picked:
            g = grads64[name]
            for index in (np.unravel_index(np.argmax(np.abs(g)), g.shape),
                          tuple(int(rng.integers(0, s)) for s in g.shape)):
                base = params[name]
                plus = dict(params, **{name: base.at[index].add(FD_STEP)})
                minus = dict(params, **{name: base.at[index].add(-FD_STEP)})
                fd = (float(loss(plus, tokens, targets)) - float(loss(minus, tokens, targets))) \
                    / (2 * FD_STEP)
                error = abs(fd - g[index]) / np.max(np.abs(g))
                rows.append((name, tuple(int(i) for i in index), fd, float(g[index]), error))
    return rows


# --- llmc ----------------------------------------------------------------------


def toml_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string for these paths and names
    raise TypeError(f"cannot write {value!r} as TOML")


def write_run_description(path, original, train, data_path):
    """The example's [model] (and every other section) with [train] and
    [data] set by the test."""
    sections = {name: dict(table) for name, table in original.items()}
    kept = {k: v for k, v in sections.get("train", {}).items()
            if k in ("batch_size", "seq_len", "microbatches")}
    # log_every = 1: a metrics line for every step.
    sections["train"] = kept | {k: getattr(train, k) for k in TRAIN} | {
        "grad_clip": train.grad_clip, "log_every": 1}
    # shuffle = false: llm.c's consecutive order, which the JAX side reads.
    sections["data"] = {"path": str(data_path), "format": "tokens", "shuffle": False}
    lines = ["# Written by test/parity/train_parity.py from an example; see there."]
    for name, table in sections.items():
        lines.append(f"\n[{name}]")
        lines += [f"{key} = {toml_value(value)}" for key, value in table.items()]
    path.write_text("\n".join(lines) + "\n")


def llmc_gradients(args, toml, weights_path, batch_path, workdir):
    """Returns ({output name: array}, None) or (None, reason)."""
    executable, outputs = workdir / "grads.llmcx", workdir / "grads.safetensors"
    _, error = forward_parity.run([args.llmc, "compile", str(toml), "--emit=llmc-autodiff",
                                   "-o", str(executable)], "llmc compile --emit=llmc-autodiff")
    if error:
        return None, error
    _, error = forward_parity.run([args.llmc_run, str(executable), "--weights", str(weights_path),
                                   "--inputs", str(batch_path), "--save-outputs", str(outputs)],
                                  "llmc-run (gradients)")
    if error:
        return None, error
    try:
        return load_file(str(outputs)), None
    except Exception as e:  # noqa: BLE001 (any unreadable file is a failure)
        return None, f"cannot read {outputs}: {e}"


def llmc_metrics(args, toml, weights_path, workdir, steps):
    """Returns ([metrics dict per step], None) or (None, reason)."""
    executable, metrics = workdir / "train.llmcx", workdir / "metrics.jsonl"
    metrics.unlink(missing_ok=True)
    _, error = forward_parity.run([args.llmc, "compile", str(toml), "-o", str(executable)],
                                  "llmc compile")
    if error:
        return None, error
    _, error = forward_parity.run([args.llmc_run, str(executable), "--weights", str(weights_path),
                                   "--metrics", str(metrics)], "llmc-run (training)")
    if error:
        return None, error
    if not metrics.exists():
        return None, f"llmc-run wrote no {metrics}"
    lines = [line for line in metrics.read_text().splitlines() if line.strip()]
    try:
        records = [json.loads(line) for line in lines]
    except json.JSONDecodeError as e:
        return None, f"{metrics}: not one JSON object per line: {e}"
    got = [r.get("step") for r in records]
    if got != list(range(1, steps + 1)):
        return None, f"{metrics}: expected steps 1..{steps} in order, got {got}"
    for r in records:
        for key in ("loss", "lr", "grad_norm"):
            if not isinstance(r.get(key), (int, float)) or not math.isfinite(r[key]):
                return None, f"{metrics}: step {r['step']}: '{key}' is {r.get(key)!r}"
    return records, None


# --- One model -----------------------------------------------------------------


def check_model(args, name, seed):
    """Returns the list of failures (empty when the model agrees)."""
    base, replaced = VARIANTS.get(name, (name, {}))
    toml = Path(args.examples) / f"{base}.toml"
    with open(toml, "rb") as f:
        original = tomllib.load(f)
    original.setdefault("model", {}).update(replaced)
    if "hf_config" in original.get("model", {}):
        return [f"{name}: hf_config run descriptions are not supported by this test"]
    cfg = jax_models.Config.from_run_description(original)
    train = Train(**TRAIN, grad_clip=GRAD_CLIP[name],
                  microbatches=original.get("train", {}).get("microbatches", 1))
    rng = np.random.default_rng(seed)
    weights = forward_parity.draw_weights(cfg, rng)
    B, T = cfg.batch_size, cfg.seq_len
    # One batch short of the steps: the last step's batch wraps to the start.
    stream = rng.integers(0, cfg.vocab_size, (train.steps - 1) * B * T + 1)
    data = batches(stream, B, T, train.steps)
    tokens, targets, _ = data[0]

    workdir = Path(args.workdir) / name
    workdir.mkdir(parents=True, exist_ok=True)
    data_path, run_path = workdir / f"{name}.bin", workdir / "run.toml"
    weights_path, batch_path = workdir / "weights.safetensors", workdir / "batch.safetensors"
    write_shard(data_path, stream)
    write_run_description(run_path, original, train, data_path)
    save_file(weights, str(weights_path))
    save_file({"tokens": tokens, "targets": targets}, str(batch_path))

    count = sum(w.size for w in weights.values())
    wrapped = [t for t, (_, _, pos) in enumerate(data, 1) if t > 1 and pos == 0]
    print(f"\n== {name}: {cfg.family}, {count:,} parameters, batch {B}x{T}"
          f" ({train.microbatches} microbatch{'es' if train.microbatches > 1 else ''}),"
          f" seed {seed}; {len(stream)} tokens, step{'s' if len(wrapped) > 1 else ''}"
          f" {', '.join(map(str, wrapped))} wrap{'' if len(wrapped) > 1 else 's'} to the start"
          f" ({run_path})")
    failures = []
    start = time.monotonic()

    # (a) Gradients at the initial weights, on the batch of step 1.
    loss32, grads32 = jax_gradients(cfg, train, weights, tokens, targets, jnp.float32)
    with jax.enable_x64(True):
        loss64, grads64 = jax_gradients(cfg, train, weights, tokens, targets, jnp.float64)
    f32_errors = {n: relative_l2(grads32[n], grads64[n]) for n in grads64}
    worst32 = max(f32_errors, key=f32_errors.get)
    norms = {n: float(np.linalg.norm(g)) for n, g in grads64.items()}
    smallest = min(norms, key=norms.get)
    print(f"   gradients: jax f32 vs f64 worst {f32_errors[worst32]:.2e} ({worst32});"
          f" smallest gradient norm {norms[smallest]:.2e} ({smallest}),"
          f" largest {max(norms.values()):.2e}")
    if args.jax_only:
        if not f32_errors[worst32] < GRAD_TOLERANCE / 10:
            failures.append(f"{name}: JAX's f32 gradient of {worst32} is {f32_errors[worst32]:.2e}"
                            f" from f64, more than a tenth of the tolerance {GRAD_TOLERANCE:.0e}")
        worst_fd = 0.0
        for pname, index, fd, g, error in finite_differences(cfg, train, weights, tokens,
                                                             targets, grads64, rng):
            worst_fd = max(worst_fd, error)
            print(f"   fd {pname}{list(index)}: fd {fd:.10g}, jax f64 {g:.10g}, {error:.1e}")
            if not error < FD_TOLERANCE:
                failures.append(f"{name}: finite difference of {pname}{list(index)} is {fd:.10g},"
                                f" JAX's f64 gradient {g:.10g} ({error:.1e} of the tensor's"
                                f" largest element, tolerance {FD_TOLERANCE:.0e})")
        print(f"   finite differences: worst {worst_fd:.1e} (< {FD_TOLERANCE:.0e})")
    else:
        outputs, error = llmc_gradients(args, run_path, weights_path, batch_path, workdir)
        if error:
            failures.append(f"{name}: {error}")
        else:
            failures += compare_gradients(name, outputs, loss32, grads32)

    # (b) The losses of the training steps.
    log32 = jax_train(cfg, train, weights, data, jnp.float32)
    with jax.enable_x64(True):
        log64 = jax_train(cfg, train, weights, data, jnp.float64)
    drift = [forward_parity.relative(a["loss"], b["loss"]) for a, b in zip(log32, log64)]
    norm_drift = max(forward_parity.relative(a["grad_norm"], b["grad_norm"])
                     for a, b in zip(log32, log64))
    clipped = [t for t, r in enumerate(log32, 1) if r["clipped"]]
    print(f"   training: jax f32 vs f64 losses worst {max(drift):.2e} (step"
          f" {int(np.argmax(drift)) + 1}), grad_norm {norm_drift:.2e}; clipped at grad_clip {train.grad_clip} in steps"
          f" {clipped} ({len(clipped)} of {train.steps})")
    if not clipped or len(clipped) == train.steps:
        failures.append(f"{name}: grad_clip {train.grad_clip} clips in {len(clipped)} of "
                        f"{train.steps} steps; choose one that clips in some steps only "
                        f"(grad norms {[round(r['grad_norm'], 3) for r in log32]})")
    if args.jax_only and not max(drift) < LOSS_TOLERANCE / 10:
        failures.append(f"{name}: JAX's f32 loss at step {int(np.argmax(drift)) + 1} is "
                        f"{max(drift):.2e} from f64, more than a tenth of the tolerance")
    if cfg.family == "moe":
        gap, noise = router_ties(cfg, weights, log32, log64, data)
        print(f"   router: smallest gap between the top-{cfg.experts_per_token} logits and the"
              f" next along the trajectory {gap:.2e}; largest f32-f64 logit difference"
              f" {noise:.2e} ({gap / noise:.0f}x smaller)")

    metrics = None
    if not args.jax_only:
        metrics, error = llmc_metrics(args, run_path, weights_path, workdir, train.steps)
        if error:
            failures.append(f"{name}: {error}")
    failures += compare_training(name, log32, log64, metrics)
    if cfg.family == "moe" and any("llmc loss" in f for f in failures):
        failures.append(f"{name}: (the router's smallest top-k gap is {gap:.2e} and JAX's f32"
                        f" logits are {noise:.2e} from f64: a loss that differs from some step"
                        f" on, by much more than earlier, may be a near-tie choosing another"
                        f" expert rather than a bug)")

    for mutation, meaning in OPTIMIZER_MUTATIONS.items():
        changed = jax_train(cfg, train, weights, data, jnp.float32, mutation)
        moved = max(forward_parity.relative(a["loss"], b["loss"])
                    for a, b in zip(changed, log32))
        seen = moved >= SENSITIVITY
        print(f"   ({mutation}) moves the losses by up to {moved:.2e}"
              f" ({'seen' if seen else 'TOO WEAK'})")
        if not seen:
            failures.append(f"{name}: the data cannot tell a wrong optimizer from the right one: "
                            f"'{mutation}' ({meaning}) moves the losses by only {moved:.2e} "
                            f"relative, less than {SENSITIVITY:.0e}")
    print(f"   {'ok' if not failures else 'FAILED'} in {time.monotonic() - start:.1f} s")
    return failures


def compare_gradients(name, outputs, loss32, grads32):
    """llmc's `loss` and `grad.<p>` outputs against JAX's f32 ones."""
    failures = []
    if "loss" not in outputs:
        failures.append(f"{name}: the gradient executable has no output 'loss'")
    else:
        err = forward_parity.relative(float(outputs["loss"]), loss32)
        if not err < forward_parity.TOLERANCE:
            failures.append(f"{name}: the gradient executable's loss {float(outputs['loss']):.9g}"
                            f" differs from JAX's {loss32:.9g} by {err:.2e} relative"
                            f" (tolerance {forward_parity.TOLERANCE:.0e})")
    expected = {"loss"} | {f"grad.{n}" for n in grads32}
    unexpected = sorted(set(outputs) - expected)
    if unexpected:
        failures.append(f"{name}: unexpected outputs {unexpected}")
    errors = {}
    for param, g in grads32.items():
        got = outputs.get(f"grad.{param}")
        if got is None:
            failures.append(f"{name}: no output grad.{param}")
            continue
        if got.shape != g.shape:
            failures.append(f"{name}: grad.{param} has shape {list(got.shape)}, expected"
                            f" {list(g.shape)}")
            continue
        errors[param] = err = relative_l2(got, g)
        if not err < GRAD_TOLERANCE:  # also catches NaN
            at = np.unravel_index(np.nanargmax(np.abs(got - g)), g.shape)
            failures.append(f"{name}: grad.{param} differs from JAX's by {err:.2e} (relative"
                            f" L2, tolerance {GRAD_TOLERANCE:.0e}); largest difference at"
                            f" {[int(i) for i in at]}: llmc {got[at]:.9g}, jax {g[at]:.9g}")
    if errors:
        worst = max(errors, key=errors.get)
        print(f"   llmc gradients: worst {errors[worst]:.2e} ({worst}), median"
              f" {float(np.median(list(errors.values()))):.2e} over {len(errors)} tensors"
              f" (< {GRAD_TOLERANCE:.0e}: {'ok' if errors[worst] < GRAD_TOLERANCE else 'FAIL'})")
    return failures


def compare_training(name, log32, log64, metrics):
    """Prints the loss curves; returns the failures of llmc's metrics."""
    failures = []
    worst = {"loss": 0.0, "grad_norm": 0.0, "lr": 0.0}
    off = {"loss": [], "grad_norm": [], "lr": []}  # (step, llmc, jax, error) beyond tolerance
    print(f"   {'step':>4} {'lr':>10} {'grad_norm':>10}  {'jax f32':>11} {'f32-f64':>8}"
          + (f"  {'llmc':>11} {'rel err':>8}" if metrics else ""))
    for t, (a, b) in enumerate(zip(log32, log64), 1):
        line = (f"   {t:>4} {a['lr']:>10.4g} {a['grad_norm']:>10.5g}{'*' if a['clipped'] else ' '}"
                f" {a['loss']:>11.8g} {forward_parity.relative(a['loss'], b['loss']):>8.1e}")
        if metrics:
            got = metrics[t - 1]
            errs = {k: forward_parity.relative(got[k], a[k]) for k in worst}
            line += f"  {got['loss']:>11.8g} {errs['loss']:>8.1e}"
            for key, tolerance in (("loss", LOSS_TOLERANCE), ("grad_norm", LOSS_TOLERANCE),
                                   ("lr", LR_TOLERANCE)):
                worst[key] = max(worst[key], errs[key])
                if not errs[key] < tolerance:  # also NaN
                    off[key].append((t, got[key], a[key], errs[key]))
        print(line)
    print("   (* the step clips)")
    tolerances = {"loss": LOSS_TOLERANCE, "grad_norm": LOSS_TOLERANCE, "lr": LR_TOLERANCE}
    for key, rows in off.items():
        if rows:
            t, got, want, err = rows[0]
            worst_row = max(rows, key=lambda r: r[3])
            failures.append(f"{name}: llmc {key} is off in {len(rows)} of {len(log32)} steps"
                            f" {[r[0] for r in rows]}; first at step {t}: llmc {got:.9g},"
                            f" JAX {want:.9g}, {err:.2e} relative; worst at step {worst_row[0]}:"
                            f" {worst_row[3]:.2e} (tolerance {tolerances[key]:.0e})")
    if metrics:
        print(f"   llmc training: worst relative error: loss {worst['loss']:.2e}, grad_norm"
              f" {worst['grad_norm']:.2e}, lr {worst['lr']:.2e}")
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--llmc", default=str(REPO / "build/bin/llmc"), help="the llmc binary")
    parser.add_argument("--llmc-run", default=str(REPO / "build/bin/llmc-run"),
                        help="the llmc-run binary")
    parser.add_argument("--examples", default=str(REPO / "examples"),
                        help="folder of the run descriptions " + ", ".join(f"{m}.toml" for m in MODELS))
    parser.add_argument("--workdir", help="where to write weights, data, run descriptions and "
                        "executables (default: a temporary folder, removed at the end)")
    parser.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    parser.add_argument("--seed", type=int, default=20240917, help="seed of weights and data")
    parser.add_argument("--jax-only", action="store_true",
                        help="check the JAX side against f64 and finite differences; no llmc")
    args = parser.parse_args()

    print(f"JAX {jax.__version__} on {jax.devices()[0].platform}, numpy {np.__version__};"
          f" tolerances (f32, relative): gradients {GRAD_TOLERANCE:.0e} (L2 per tensor),"
          f" losses {LOSS_TOLERANCE:.0e} per step; mutations must move a loss by"
          f" >= {SENSITIVITY:.0e}")
    with tempfile.TemporaryDirectory(prefix="llmc-train-parity-") as scratch:
        if args.workdir is None:
            args.workdir = scratch
        failures = []
        for name in args.models:  # a model's seed does not depend on the others run
            failures += check_model(args, name, args.seed + MODELS.index(name))
    if failures:
        print(f"\nFAILED ({len(failures)}):", file=sys.stderr)
        for failure in failures:
            print(f"- {failure}", file=sys.stderr)
        return 1
    what = "the JAX side" if args.jax_only else "llmc trains as JAX does"
    print(f"\nok: {what} ({', '.join(args.models)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
