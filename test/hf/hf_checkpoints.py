#!/usr/bin/env python3
"""Hugging Face checkpoints in and out of llmc, without torch (issue #23).

For four tiny models (GPT-2; LLaMA with GQA and LLaMA 3 rope scaling; a tied
LLaMA with head_dim != hidden/heads and biases; Mixtral) the script draws
weights, writes them as the Hugging Face folders transformers writes
(hf_files.py), and checks:

1. Loading. `llmc compile RUN.toml --forward` with `[model] hf = FOLDER`,
   then `llmc-run --weights VARIANT --inputs BATCH --save-outputs`: every
   variant of the same weights gives the f32 folder's loss *bitwise* -- bf16,
   f16, 3 shards with an index, bf16 in 2 shards, GPT-2 without its
   `transformer.` prefix (with the attn.bias masks of openai-community/gpt2),
   a tied head saved twice, Mixtral's experts fused as transformers 5 holds
   them, and the artifact's own folder (no --weights). Why bitwise: the
   weights are drawn exactly representable in bf16 and in f16
   (hf_files.draw_weights), so every conversion to the f32 parameters is
   exact, and the CPU program is deterministic: any difference is a loading
   bug (a wrong tensor, a wrong slice), not rounding.
2. Numerics of the scaled rope: the f32 loss of the LLaMA 3 model against
   test/parity/jax_models.py with transformers' llama3 inverse frequencies
   (hf_files.llama3_inverse_frequencies), within 1e-5 relative (the
   forward-parity tolerance, docs/testing.md); the same JAX model with the
   unscaled rope must differ by 5x that, or the check proves nothing.
3. Export. 2 training steps with a checkpoint, `llmc export` (f32) and
   `llmc-run export --dtype bf16 --shard-size 20KB`: the f32 folder holds the
   checkpoint's parameters bitwise (Mixtral's split back per expert), the
   bf16 shards hold them rounded to nearest even (ml_dtypes' rounding) with
   an index; config.json reads back as the same model (a forward artifact
   compiled from the exported folder gives the checkpoint's loss bitwise);
   the tokenizer and generation config travel; an existing folder is
   refused without --force.

Exit status 0 when everything holds, 1 otherwise (each failure printed).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "parity"))
import hf_files  # noqa: E402

TOLERANCE = 1e-5
BATCH, SEQ = 2, 16
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)
    return condition


def run(command, expect_ok=True):
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True,
                          timeout=600)
    if expect_ok and done.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, command))} exited with {done.returncode}:\n"
                           f"{done.stdout}{done.stderr}")
    return done


def run_toml(folder, model, extra=""):
    text = f'[model]\nhf = "{folder}"\n'
    if model == "mixtral":  # capacity E/k: no token dropped, as transformers
        text += "capacity_factor = 2.0\n"
    return text + f"[train]\nbatch_size = {BATCH}\nseq_len = {SEQ}\n" + extra


def loss(args, artifact, inputs, out, weights=None):
    """The loss bits (a uint32) of one run of a forward artifact."""
    command = [args.llmc_run, artifact, "--inputs", inputs, "--save-outputs", out]
    if weights is not None:
        command += ["--weights", weights]
    run(command)
    value = hf_files.read_safetensors(out)[0]["loss"]
    return np.float32(value).view(np.uint32).item(), float(value)


def variants(model, weights, work):
    """{name: folder} of the same weights stored otherwise."""
    config = hf_files.CONFIGS[model]
    out = {
        "bf16": hf_files.write_folder(work / "bf16", config, weights, "BF16"),
        "f16": hf_files.write_folder(work / "f16", config, weights, "F16"),
        "3 shards": hf_files.write_folder(work / "sharded", config, weights, shards=3),
        "bf16 in 2 shards": hf_files.write_folder(work / "sharded-bf16", config, weights,
                                                  "BF16", shards=2),
    }
    if model == "gpt2":
        # openai-community/gpt2: GPT2Model names and the causal-mask buffers.
        masked = dict(weights)
        P = config["n_positions"]
        for i in range(config["n_layer"]):
            masked[f"transformer.h.{i}.attn.bias"] = np.tril(np.ones((1, 1, P, P), np.float32))
        out["no prefix"] = hf_files.write_folder(
            work / "no-prefix", config, masked,
            names=lambda n: n.removeprefix("transformer."))
    if model == "llama-tied":
        twice = dict(weights, **{"lm_head.weight": weights["model.embed_tokens.weight"]})
        out["head saved twice"] = hf_files.write_folder(work / "twice", config, twice)
    if model == "mixtral":
        # transformers 5 without its legacy conversion: mlp.gate, and per
        # layer gate_up_proj [E, 2F, C] (w1 rows, then w3) and down_proj.
        out["transformers 5 fused experts"] = hf_files.write_folder(
            work / "fused", config, hf_files.fuse_mixtral_experts(weights))
    return out


# A tokenizer.json the folder carries (training reads it, checkpoints and
# exports copy it): a BPE over printable ASCII, ids below VOCAB, no merges.
TINY_TOKENIZER = json.dumps({
    "version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
    "normalizer": None, "pre_tokenizer": None, "post_processor": None, "decoder": None,
    "model": {"type": "BPE", "dropout": None, "unk_token": None,
              "continuing_subword_prefix": None, "end_of_word_suffix": None,
              "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
              "vocab": {chr(i): i for i in range(32, 127)}, "merges": []}}) + "\n"


def check_loading(args, model, weights, work, inputs):
    config = hf_files.CONFIGS[model]
    base = hf_files.write_folder(work / "f32", config, weights,
                                 extra_files={"tokenizer.json": TINY_TOKENIZER})
    toml = work / "forward.toml"
    toml.write_text(run_toml(base, model))
    artifact = work / "forward.llmcx"
    run([args.llmc, "compile", toml, "--forward", "-o", artifact])
    want, value = loss(args, artifact, inputs, work / "out.safetensors", base)
    print(f"{model}: f32 loss {value:.9g}")
    for name, folder in variants(model, weights, work).items():
        got, got_value = loss(args, artifact, inputs, work / "out.safetensors", folder)
        check(got == want, f"{model}: the {name} folder gives loss {got_value:.9g}, the f32 "
                           f"folder {value:.9g}")
    got, _ = loss(args, artifact, inputs, work / "out.safetensors")
    check(got == want, f"{model}: the artifact's own folder (no --weights) gives another loss")

    # `llmc compile --logits` (what bench/hf_parity.py compares with
    # transformers): its mean cross-entropy in f64 is the loss within f32
    # rounding (1e-6 relative: a few hundred f32 terms). Mixtral's loss adds
    # the balancing term, which the logits program has not.
    logits_exe = work / "logits.llmcx"
    run([args.llmc, "compile", toml, "--logits", "-o", logits_exe])
    run([args.llmc_run, logits_exe, "--inputs", inputs, "--save-outputs",
         work / "logits.safetensors"])
    logits = hf_files.read_safetensors(work / "logits.safetensors")[0]["logits"]
    check(logits.shape == (BATCH, SEQ, hf_files.VOCAB), f"{model}: logits {logits.shape}")
    if model != "mixtral":
        targets = hf_files.read_safetensors(inputs)[0]["targets"]
        z = logits.astype(np.float64)
        lse = np.log(np.exp(z - z.max(-1, keepdims=True)).sum(-1)) + z.max(-1)
        ce = float(np.mean(lse - np.take_along_axis(z, targets[..., None], -1)[..., 0]))
        check(abs(ce - value) / abs(value) < 1e-6,
              f"{model}: the logits' cross-entropy {ce:.9g} is not the loss {value:.9g}")
    return base, value


def check_llama3_against_jax(value, weights, tokens, targets):
    import jax  # noqa: E402
    import jax_models  # noqa: E402
    jax.config.update("jax_default_matmul_precision", "highest")
    c = hf_files.CONFIGS["llama3"]
    inv_freq = tuple(hf_files.llama3_inverse_frequencies(c).tolist())
    cfg = jax_models.Config(
        family="llama", vocab_size=c["vocab_size"], layers=c["num_hidden_layers"],
        width=c["hidden_size"], heads=c["num_attention_heads"],
        kv_heads=c["num_key_value_heads"], ffn_width=c["intermediate_size"],
        max_positions=c["max_position_embeddings"], norm_eps=c["rms_norm_eps"],
        rope_theta=c["rope_theta"], tie_embeddings=False, experts=0, experts_per_token=0,
        capacity_factor=1.0, aux_loss_weight=0.0, batch_size=BATCH, seq_len=SEQ,
        inv_freq=inv_freq)
    scaled = float(jax_models.loss_fn(cfg)(weights, tokens, targets))
    plain = float(jax_models.loss_fn(jax_models.dataclasses.replace(cfg, inv_freq=None))(
        weights, tokens, targets))
    error = abs(value - scaled) / abs(scaled)
    moved = abs(plain - scaled) / abs(scaled)
    print(f"llama3: JAX {scaled:.9g} (unscaled rope {plain:.9g}): llmc within {error:.2e}, "
          f"the scaling moves the loss by {moved:.2e}")
    check(error < TOLERANCE, f"llama3: llmc's loss {value:.9g} is {error:.2e} from JAX's "
                             f"{scaled:.9g} (tolerance {TOLERANCE})")
    check(moved > 5 * TOLERANCE, f"llama3: the rope scaling moves the JAX loss by only "
                                 f"{moved:.2e}: the inputs cannot tell it from no scaling")


def check_export(args, model, base, work, inputs):
    """Train 2 steps from `base`, export, compare tensors and losses."""
    train = work / "train.toml"
    train.write_text(run_toml(base, model, "steps = 2\nlearning_rate = 1e-3\n"
                                           f'[checkpoint]\ndir = "{work / "ck"}"\n'))
    run([args.llmc, "compile", train, "-o", work / "train.llmcx"])
    run([args.llmc_run, work / "train.llmcx", "--device", "cpu"])
    step = work / "ck" / "step-00000002"
    check((step / "config.json").exists() and (step / "tokenizer.json").exists(),
          f"{model}: the checkpoint lacks config.json or tokenizer.json")
    saved = hf_files.read_safetensors(step / "model.safetensors")[0]

    out32, out16 = work / "hf-f32", work / "hf-bf16"
    run([args.llmc, "export", work / "ck", "-o", out32])
    exported = hf_files.read_folder(out32)
    check(set(hf_files.stack_experts(exported)) == set(saved),
          f"{model}: the export holds other tensors than the checkpoint")
    for name, array in hf_files.stack_experts(exported).items():
        check(name in saved and array.dtype == np.float32 and
              np.array_equal(array.view(np.uint32), saved[name].view(np.uint32)),
              f"{model}: exported '{name}' is not the checkpoint's bit for bit")
    if model == "mixtral":
        check("model.layers.0.block_sparse_moe.experts.3.w2.weight" in exported,
              "mixtral: the export does not name the experts one by one")
    config = json.loads((out32 / "config.json").read_text())
    check(config["torch_dtype"] == "float32" and (out32 / "tokenizer.json").exists() and
          (out32 / "generation_config.json").exists(),
          f"{model}: the export's config, tokenizer or generation config is wrong")

    run([args.llmc_run, "export", work / "ck", "-o", out16, "--dtype", "bf16",
         "--shard-size", "20KB"])
    index = json.loads((out16 / "model.safetensors.index.json").read_text())
    files = set(index["weight_map"].values())
    check(len(files) > 1, f"{model}: a 20KB shard size gave {len(files)} file(s)")
    for name, array in hf_files.stack_experts(hf_files.read_folder(out16)).items():
        want = saved[name].astype(ml_dtypes.bfloat16)
        check(array.dtype == want.dtype and np.array_equal(array.view(np.uint16),
                                                           want.view(np.uint16)),
              f"{model}: bf16 '{name}' is not the checkpoint rounded to nearest even")
    check(json.loads((out16 / "config.json").read_text())["torch_dtype"] == "bfloat16",
          f"{model}: the bf16 export's config does not say bfloat16")

    # The exported config describes the same model: a forward artifact
    # compiled from the exported folder, with its own weights, gives the
    # loss of the checkpoint's weights on the original artifact.
    toml = work / "exported.toml"
    toml.write_text(run_toml(out32, model))
    run([args.llmc, "compile", toml, "--forward", "-o", work / "exported.llmcx"])
    from_export, value = loss(args, work / "exported.llmcx", inputs, work / "out.safetensors")
    from_checkpoint, other = loss(args, work / "forward.llmcx", inputs, work / "out.safetensors",
                                  step / "model.safetensors")
    check(from_export == from_checkpoint,
          f"{model}: the exported folder gives loss {value:.9g}, the checkpoint {other:.9g}")

    refused = run([args.llmc, "export", work / "ck", "-o", out32], expect_ok=False)
    check(refused.returncode == 1 and f"'{out32}' exists; choose another -o, or pass --force "
          "to replace it" in refused.stderr, f"{model}: export over a folder: {refused.stderr}")
    run([args.llmc, "export", work / "ck", "-o", out32, "--force"])
    check(not list(work.glob("hf-f32.*")), f"{model}: export left a partial or old folder")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--llmc", required=True)
    parser.add_argument("--llmc-run", required=True)
    parser.add_argument("--workdir")
    parser.add_argument("--models", nargs="*", default=list(hf_files.CONFIGS))
    args = parser.parse_args()
    root = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="llmc-hf-"))
    shutil.rmtree(root, ignore_errors=True)
    rng = np.random.default_rng(23)
    tokens = rng.integers(0, hf_files.VOCAB, (BATCH, SEQ), dtype=np.int32)
    targets = rng.integers(0, hf_files.VOCAB, (BATCH, SEQ), dtype=np.int32)
    for seed, model in enumerate(args.models):
        work = root / model
        work.mkdir(parents=True)
        inputs = work / "batch.safetensors"
        hf_files.write_safetensors(inputs, {"tokens": tokens, "targets": targets})
        weights = hf_files.draw_weights(hf_files.CONFIGS[model], seed)
        try:
            base, value = check_loading(args, model, weights, work, inputs)
            if model == "llama3":
                check_llama3_against_jax(value, weights, tokens, targets)
            check_export(args, model, base, work, inputs)
        except RuntimeError as error:
            check(False, f"{model}: {error}")
    print(f"{len(failures)} failure(s)" if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
