#!/usr/bin/env python3
"""llmc against transformers on Hugging Face checkpoints (issue #23).

Three steps, on two machines (MLIR is on the build machine only):

  prepare (build machine, `ninja -C build hf-parity-deploy`, standard
    library only): writes the config.json of each tiny model of
    test/hf/hf_configs.py (GPT-2 with and without its inverse-layer scaling
    and erf GELU; LLaMA with GQA and LLaMA 3 rope scaling, untied; a tied
    LLaMA with head_dim != hidden/heads, biases and llama3 scaling; Mixtral)
    and compiles three artifacts per model from it with `llmc`: the
    gradients (`--emit=llmc-autodiff`), the logits (`--logits`) and 2
    training steps. Beside them: llmc-run and its libraries.
  run (GPU machine: torch, transformers 5, safetensors; llmc-run on its
    CPU): for each model
      1. transformers builds the model from the config.json in f32 (eager
         attention, eval(): no dropout, no router jitter), its weights
         redrawn with std 1/sqrt(fan_in) (norm weights 1 + normal(0.1),
         biases normal(0.1)) so that attention is not uniform, and
         `save_pretrained` writes it (and a bf16 copy; for Mixtral also with
         save_original_format=False, transformers 5's fused experts);
      2. llmc-run computes the loss and every gradient from that folder;
         each must be within 1e-5 relative (per-tensor L2 for gradients) of
         transformers' (the mean cross-entropy of the logits against the
         targets, plus router_aux_loss_coef times load_balancing_loss_func
         for Mixtral, whose capacity factor E/k keeps every token);
      3. the bf16 folder loads and gives the loss of its (bf16) values in
         f32 within 1e-5;
      4. 2 training steps from the folder, `llmc-run export` of the
         checkpoint, `AutoModelForCausalLM.from_pretrained` of the export:
         its logits equal llmc's logits program on the exported folder
         within 1e-5 relative L2;
      5. with a GPU: a training step from the bf16 folder on `--device
         cuda` (the tensors widened on the device) starts at the loss of
         the same step on the CPU (host conversion), within 1e-5.
    Why 1e-5: both sides compute in f32; two correct f32 implementations
    of these models agree to ~1e-7 on the loss and ~1e-6 per gradient
    tensor (docs/testing.md's JAX measurements), while a wrong convention
    moves them by far more (hf_checkpoints.py's mutation of the rope
    scaling moves the loss by 7e-3).
  selftest (build machine, test venv: numpy, ml_dtypes): everything of
    `run` that needs no torch, on folders hf_files.py writes in
    save_pretrained's layouts: the artifacts run, the gradient names map to
    transformers' parameter names, the fused Mixtral folder loads, the
    export writes a folder with transformers' names.

Usage:
  hf_parity.py prepare --llmc build/bin/llmc --out build/deploy-hf
  hf_parity.py run --deploy DIR --workdir WORK [--json FILE]
  hf_parity.py selftest --deploy DIR --workdir WORK
"""

import argparse
import copy
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for candidate in (HERE, HERE.parent / "test" / "hf"):
    if (candidate / "hf_configs.py").exists():
        sys.path.insert(0, str(candidate))
import hf_configs  # noqa: E402

BATCH, SEQ = 2, 16
TOLERANCE = 1e-5
MODELS = list(hf_configs.CONFIGS)


def run(command, what):
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True,
                          timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"{what} exited with {done.returncode}: "
                           f"{' '.join(map(str, command))}\n{done.stdout}{done.stderr}")
    return done.stdout + done.stderr


def capacity(config):
    """Mixtral: capacity_factor E/k, so that llmc drops no token (its
    expert capacity is min(N, ceil(cf * N * k / E)); transformers has none)."""
    if config["model_type"] != "mixtral":
        return ""
    return f"capacity_factor = {config['num_local_experts'] / config['num_experts_per_tok']}\n"


# --- prepare -----------------------------------------------------------------


def prepare(args):
    out = Path(args.out)
    (out / "models").mkdir(parents=True, exist_ok=True)
    for model in MODELS:
        config = hf_configs.CONFIGS[model]
        folder = out / "models" / model
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n")
        head = f'[model]\nhf_config = "config.json"\n{capacity(config)}'
        shape = f"[train]\nbatch_size = {BATCH}\nseq_len = {SEQ}\n"
        (folder / "forward.toml").write_text(head + shape)
        (folder / "train.toml").write_text(head + shape + "steps = 2\nlearning_rate = 1e-3\n"
                                           '[parallel]\ndevices = "cpu"\n')
        run([args.llmc, "compile", folder / "forward.toml", "--emit=llmc-autodiff", "-o",
             folder / "grads.llmcx"], f"{model}: llmc compile (gradients)")
        run([args.llmc, "compile", folder / "forward.toml", "--logits", "-o",
             folder / "logits.llmcx"], f"{model}: llmc compile (logits)")
        run([args.llmc, "compile", folder / "train.toml", "-o", folder / "train.llmcx"],
            f"{model}: llmc compile (training)")
        print(f"prepared {model}")
    shutil.copy(Path(hf_configs.__file__), out / "hf_configs.py")
    if Path(__file__).resolve().parent != out.resolve():
        shutil.copy(Path(__file__), out / "hf_parity.py")


# --- the llmc side (run and selftest) ----------------------------------------


def llmc_run(deploy):
    return Path(deploy) / "llmc-run"


def llmc_gradients(args, model, weights, batch, out):
    """{"loss": array, "grad.<name>": array} of llmc from `weights`."""
    folder = Path(args.deploy) / "models" / model
    run([llmc_run(args.deploy), folder / "grads.llmcx", "--weights", weights, "--inputs",
         batch, "--save-outputs", out], f"{model}: llmc-run (gradients)")
    return load_outputs(out)


def llmc_logits(args, model, weights, batch, out):
    folder = Path(args.deploy) / "models" / model
    run([llmc_run(args.deploy), folder / "logits.llmcx", "--weights", weights, "--inputs",
         batch, "--save-outputs", out], f"{model}: llmc-run (logits)")
    return load_outputs(out)["logits"]


def llmc_train_and_export(args, model, weights, work):
    """Two steps from `weights`, then the checkpoint exported (f32 and
    bf16); returns the f32 export's folder."""
    folder = Path(args.deploy) / "models" / model
    checkpoints = work / "checkpoints"
    shutil.rmtree(checkpoints, ignore_errors=True)
    run([llmc_run(args.deploy), folder / "train.llmcx", "--weights", weights,
         "--checkpoint-dir", checkpoints, "--device", "cpu"], f"{model}: llmc-run (training)")
    exported = work / "exported"
    run([llmc_run(args.deploy), "export", checkpoints, "-o", exported, "--force"],
        f"{model}: llmc-run export")
    run([llmc_run(args.deploy), "export", checkpoints, "-o", work / "exported-bf16",
         "--dtype", "bf16", "--force"], f"{model}: llmc-run export --dtype bf16")
    return exported


def load_outputs(path):
    from safetensors.numpy import load_file
    return load_file(str(path))


def to_llmc(named, config):
    """transformers' parameters (or gradients) {name: numpy array} under
    llmc's names: Mixtral's experts stacked (per-expert modules of
    transformers 4, or transformers 5's fused gate_up_proj / down_proj
    split), its router block_sparse_moe.gate."""
    import numpy as np
    out, experts = {}, {}
    F = config.get("intermediate_size")
    for name, array in named.items():
        parts = name.split(".")
        if "experts" in parts and parts[parts.index("experts") + 1].isdigit():
            at = parts.index("experts")
            key = ".".join(parts[:at + 1] + parts[at + 2:])
            experts.setdefault(key, {})[int(parts[at + 1])] = array
        elif name.endswith(".mlp.experts.gate_up_proj"):
            layer = name[: -len(".mlp.experts.gate_up_proj")]
            if array.shape[1] != 2 * F:  # [E, C, 2F]: the other layout
                array = np.transpose(array, (0, 2, 1))
            out[layer + ".block_sparse_moe.experts.w1.weight"] = array[:, :F]
            out[layer + ".block_sparse_moe.experts.w3.weight"] = array[:, F:]
        elif name.endswith(".mlp.experts.down_proj"):
            layer = name[: -len(".mlp.experts.down_proj")]
            if array.shape[2] != F:
                array = np.transpose(array, (0, 2, 1))
            out[layer + ".block_sparse_moe.experts.w2.weight"] = array
        elif config["model_type"] == "mixtral" and name.endswith(".mlp.gate.weight"):
            out[name.replace(".mlp.gate.", ".block_sparse_moe.gate.")] = array
        else:
            out[name] = array
    for key, group in experts.items():
        out[key] = np.stack([group[j] for j in range(len(group))])
    return out


def relative(a, b):
    """||a - b|| / ||b|| (L2 over the whole tensor), in f64."""
    import numpy as np
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    norm = np.linalg.norm(b)
    return float(np.linalg.norm(a - b) / norm) if norm > 0 else float(np.linalg.norm(a))


def write_batch(path, seed, vocab):
    import numpy as np
    from safetensors.numpy import save_file
    rng = np.random.default_rng(seed)
    tokens = rng.integers(0, vocab, (BATCH, SEQ), dtype=np.int32)
    targets = rng.integers(0, vocab, (BATCH, SEQ), dtype=np.int32)
    save_file({"tokens": tokens, "targets": targets}, str(path))
    return tokens, targets


# --- run: against transformers -----------------------------------------------


def redraw(model, torch, seed):
    """Weights of order one (module docstring), in place."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 1:
                base = 1.0 if "norm" in name or "ln_" in name else 0.0
                scale = 0.1
                if name.endswith(".bias"):
                    base = 0.0
                p.copy_(base + scale * torch.randn(p.shape, generator=generator))
            else:
                # GPT-2's Conv1D is [in, out]; Linear, embeddings and
                # transformers 5's stacked experts [..., out, in].
                conv1d = name.startswith("transformer.h.")
                fan_in = p.shape[0] if conv1d else p.shape[-1]
                p.copy_(torch.randn(p.shape, generator=generator) / math.sqrt(fan_in))


def transformers_loss(model, config, tokens, targets, torch):
    """transformers' logits, llmc's loss (mean cross-entropy + Mixtral's
    weighted balancing loss)."""
    import torch.nn.functional as F
    mixtral = config["model_type"] == "mixtral"
    kwargs = {"output_router_logits": True} if mixtral else {}
    out = model(input_ids=tokens, **kwargs)
    logits = out.logits
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), targets.reshape(-1))
    if mixtral:
        from transformers.models.mixtral import modeling_mixtral
        aux = modeling_mixtral.load_balancing_loss_func(
            out.router_logits, config["num_local_experts"], config["num_experts_per_tok"], None)
        loss = loss + config["router_aux_loss_coef"] * aux
    return loss, logits


def check_model(args, model_name, seed, results):
    import numpy as np
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM
    config = hf_configs.CONFIGS[model_name]
    work = Path(args.workdir) / model_name
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    row = {"model": model_name}
    results.append(row)

    # 1. The checkpoint transformers writes.
    torch.manual_seed(seed)
    hf_config = AutoConfig.from_pretrained(Path(args.deploy) / "models" / model_name)
    model = AutoModelForCausalLM.from_config(hf_config, attn_implementation="eager")
    model = model.float().eval()
    redraw(model, torch, seed)
    model.save_pretrained(work / "f32")
    copy.deepcopy(model).to(torch.bfloat16).save_pretrained(work / "bf16")
    fused = None
    if config["model_type"] == "mixtral":
        try:
            model.save_pretrained(work / "fused", save_original_format=False)
            fused = work / "fused"
        except TypeError:
            row["fused"] = "not in this transformers"
    row["files"] = sorted(p.name for p in (work / "f32").iterdir())

    # 2. Loss and gradients.
    tokens_np, targets_np = write_batch(work / "batch.safetensors", seed, config["vocab_size"])
    tokens = torch.from_numpy(tokens_np.astype(np.int64))
    targets = torch.from_numpy(targets_np.astype(np.int64))
    model.zero_grad()
    loss, _ = transformers_loss(model, config, tokens, targets, torch)
    loss.backward()
    grads = to_llmc({n: p.grad.detach().numpy() for n, p in model.named_parameters()}, config)
    ours = llmc_gradients(args, model_name, work / "f32", work / "batch.safetensors",
                          work / "grads.safetensors")
    row["loss"] = float(loss)
    row["loss_error"] = abs(float(ours["loss"]) - float(loss)) / abs(float(loss))
    worst, worst_name, missing = 0.0, "", []
    for name, grad in grads.items():
        mine = ours.get("grad." + name)
        if mine is None:
            missing.append(name)
            continue
        error = relative(mine, grad)
        if error > worst:
            worst, worst_name = error, name
    extra = sorted(n[5:] for n in ours if n.startswith("grad.") and n[5:] not in grads)
    row["grad_error"], row["grad_worst"] = worst, worst_name
    row["grad_names_missing"], row["grad_names_extra"] = missing, extra
    if fused is not None:
        again = llmc_gradients(args, model_name, fused, work / "batch.safetensors",
                               work / "grads-fused.safetensors")
        row["fused"] = "same loss" if np.array_equal(again["loss"], ours["loss"]) else \
            f"loss {float(again['loss'])!r} != {float(ours['loss'])!r}"

    # 3. The bf16 copy against the same values in f32.
    with torch.no_grad():
        reference = AutoModelForCausalLM.from_pretrained(work / "bf16", attn_implementation="eager",
                                                         dtype=torch.float32).eval()
        bf16_loss, _ = transformers_loss(reference, config, tokens, targets, torch)
    ours_bf16 = llmc_gradients(args, model_name, work / "bf16", work / "batch.safetensors",
                               work / "grads-bf16.safetensors")
    row["bf16_loss_error"] = abs(float(ours_bf16["loss"]) - float(bf16_loss)) / abs(
        float(bf16_loss))

    # 4. Export and load in transformers.
    exported = llmc_train_and_export(args, model_name, work / "f32", work)
    with torch.no_grad():
        loaded = AutoModelForCausalLM.from_pretrained(exported, attn_implementation="eager",
                                                      dtype=torch.float32).eval()
        _, their_logits = transformers_loss(loaded, config, tokens, targets, torch)
        loaded16 = AutoModelForCausalLM.from_pretrained(work / "exported-bf16",
                                                        attn_implementation="eager",
                                                        dtype=torch.float32).eval()
        _, their_logits16 = transformers_loss(loaded16, config, tokens, targets, torch)
    our_logits = llmc_logits(args, model_name, exported, work / "batch.safetensors",
                             work / "logits.safetensors")
    row["export_logits_error"] = relative(our_logits, their_logits.numpy())
    row["export_bf16_logits_error"] = relative(their_logits16.numpy(), their_logits.numpy())

    # 5. On the GPU: the bf16 folder widened on the device
    # (CudaSession::setArgumentConverting) starts training at the loss the
    # CPU's host conversion gives (step 1's loss is that of the weights).
    if torch.cuda.is_available():
        first = {}
        for device in ("cpu", "cuda"):
            metrics = work / f"metrics-{device}.jsonl"
            run([llmc_run(args.deploy), Path(args.deploy) / "models" / model_name /
                 "train.llmcx", "--weights", work / "bf16", "--device", device, "--steps", "1",
                 "--metrics", metrics, "--checkpoint-dir", work / f"ck-{device}"],
                f"{model_name}: llmc-run --device {device} from the bf16 folder")
            first[device] = json.loads(metrics.read_text().splitlines()[0])["loss"]
        row["cuda_bf16_start_error"] = abs(first["cuda"] - first["cpu"]) / abs(first["cpu"])

    ok = (row["loss_error"] < TOLERANCE and row["grad_error"] < TOLERANCE and not missing and
          not extra and row["bf16_loss_error"] < TOLERANCE and
          row["export_logits_error"] < TOLERANCE and
          row.get("fused", "same loss") in ("same loss", "not in this transformers") and
          row.get("cuda_bf16_start_error", 0.0) < TOLERANCE)
    row["ok"] = ok
    return ok


def run_against_transformers(args):
    import torch
    import transformers
    torch.set_num_threads(min(16, os.cpu_count() or 1))
    print(f"transformers {transformers.__version__}, torch {torch.__version__}")
    results, ok = [], True
    for seed, model in enumerate(args.models):
        try:
            ok &= check_model(args, model, seed, results)
        except Exception as error:  # report every model, then fail
            ok = False
            results.append({"model": model, "ok": False, "error": repr(error)})
            print(f"{model}: {error!r}")
    print("\n| model | loss (transformers) | loss rel. err | worst gradient rel. err (tensor) "
          "| bf16 copy loss rel. err | export: logits rel. err (bf16 export) | ok |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        if "error" in r:
            print(f"| {r['model']} | error: {r['error'][:200]} | | | | | no |")
            continue
        print(f"| {r['model']} | {r['loss']:.9g} | {r['loss_error']:.2e} | "
              f"{r['grad_error']:.2e} ({r['grad_worst']}) | {r['bf16_loss_error']:.2e} | "
              f"{r['export_logits_error']:.2e} ({r['export_bf16_logits_error']:.1e}) | "
              f"{'yes' if r['ok'] else 'NO'} |")
        for key in ("grad_names_missing", "grad_names_extra"):
            if r[key]:
                print(f"  {r['model']}: {key}: {r[key]}")
        if "fused" in r:
            print(f"  {r['model']}: transformers 5 fused experts (save_original_format=False): "
                  f"{r['fused']}")
        print(f"  {r['model']}: save_pretrained wrote {', '.join(r['files'])}")
        if "cuda_bf16_start_error" in r:
            print(f"  {r['model']}: bf16 folder widened on the GPU: step 1 loss within "
                  f"{r['cuda_bf16_start_error']:.2e} of the CPU's")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    print("all models agree" if ok else "FAILED")
    return 0 if ok else 1


# --- selftest: the llmc side without torch -----------------------------------


def selftest(args):
    import numpy as np
    import hf_files
    failures = []
    for seed, model in enumerate(args.models):
        config = hf_configs.CONFIGS[model]
        work = Path(args.workdir) / model
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        weights = hf_files.draw_weights(config, seed)
        f32 = hf_files.write_folder(work / "f32", config, weights)
        write_batch(work / "batch.safetensors", seed, config["vocab_size"])
        ours = llmc_gradients(args, model, f32, work / "batch.safetensors",
                              work / "grads.safetensors")
        names = set(to_llmc(weights, config))
        grads = {n[5:] for n in ours if n.startswith("grad.")}
        if names != grads:
            failures.append(f"{model}: gradient names {sorted(grads ^ names)} do not map")
        if model == "mixtral":
            fused = hf_files.write_folder(work / "fused", config,
                                          hf_files.fuse_mixtral_experts(weights))
            if set(to_llmc(hf_files.fuse_mixtral_experts(weights), config)) != names:
                failures.append("mixtral: the fused names do not map to llmc's")
            again = llmc_gradients(args, model, fused, work / "batch.safetensors",
                                   work / "grads-fused.safetensors")
            if not np.array_equal(again["loss"], ours["loss"]):
                failures.append("mixtral: the fused folder gives another loss")
        exported = llmc_train_and_export(args, model, f32, work)
        written = set(hf_files.read_folder(exported))
        if written != set(weights):
            failures.append(f"{model}: the export's names differ from transformers': "
                            f"{sorted(written ^ set(weights))}")
        exported_config = json.loads((exported / "config.json").read_text())
        for key, value in config.items():
            if key not in ("torch_dtype",) and exported_config.get(key, value) != value:
                failures.append(f"{model}: the export's config.json says {key} = "
                                f"{exported_config.get(key)!r}, the model {value!r}")
        logits = llmc_logits(args, model, exported, work / "batch.safetensors",
                             work / "logits.safetensors")
        if logits.shape != (BATCH, SEQ, config["vocab_size"]):
            failures.append(f"{model}: logits of shape {logits.shape}")
        print(f"selftest {model}: loss {float(ours['loss']):.6g}, {len(grads)} gradients, "
              f"export of {len(written)} tensors")
    for f in failures:
        print("FAIL:", f)
    print("selftest passed" if not failures else "selftest FAILED")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--llmc", required=True)
    p.add_argument("--out", required=True)
    for name in ("run", "selftest"):
        p = sub.add_parser(name)
        p.add_argument("--deploy", required=True)
        p.add_argument("--workdir", required=True)
        p.add_argument("--models", nargs="*", default=MODELS)
        p.add_argument("--json")
    args = parser.parse_args()
    if args.step == "prepare":
        prepare(args)
        return 0
    if args.step == "selftest":
        return selftest(args)
    return run_against_transformers(args)


if __name__ == "__main__":
    sys.exit(main())
