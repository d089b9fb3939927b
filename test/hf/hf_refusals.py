#!/usr/bin/env python3
"""Every refusal of a Hugging Face checkpoint, through the tools (issue #23).

Each case writes a folder that is wrong in one way (hf_files.py), runs
`llmc` or `llmc-run` on it, and requires the exit status and the whole
message: what was expected, what was found, the file or tensor, and the fix.
The messages of config.json alone are checked in full by
test/compiler/HfConfigTest.cpp; here are those that need files: fp8 and
quantized tensors, missing and unused tensors (and `strict = false`), a tied
head that is not the embedding, shapes of another config, broken shard
indexes, dropout refused for training only, a pickle instead of
safetensors, and export's own errors. A model folder as the input of
`llmc train`, `llmc inspect` and `llmc compile` works.

Exit status 0 when every case holds, 1 otherwise.
"""

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import ml_dtypes
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import hf_files  # noqa: E402

failures = []


def run(command):
    return subprocess.run([str(c) for c in command], capture_output=True, text=True,
                          timeout=600)


def expect(name, done, status, *messages):
    """`done` exited with `status` and its output holds every message."""
    output = done.stdout + done.stderr
    ok = done.returncode == status and all(m in output for m in messages)
    if not ok:
        failures.append(name)
        print(f"FAIL: {name}: exit {done.returncode} (expected {status})\n{output}")
        for m in messages:
            if m not in output:
                print(f"  missing: {m}")
    else:
        print(f"ok: {name}")
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--llmc", required=True)
    parser.add_argument("--llmc-run", required=True)
    parser.add_argument("--workdir")
    args = parser.parse_args()
    root = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="llmc-hf-"))
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    llmc, llmc_run = args.llmc, args.llmc_run

    # A LLaMA and its forward artifact; every weights case runs on it.
    config = hf_files.CONFIGS["llama3"]
    weights = hf_files.draw_weights(config, 0)
    good = hf_files.write_folder(root / "good", config, weights)
    batch = root / "batch.safetensors"
    ids = np.arange(32, dtype=np.int32).reshape(2, 16) % hf_files.VOCAB
    hf_files.write_safetensors(batch, {"tokens": ids, "targets": ids})

    def artifact(name, folder, extra=""):
        toml = root / f"{name}.toml"
        toml.write_text(f'[model]\nhf = "{folder}"\n{extra}[train]\nbatch_size = 2\n'
                        "seq_len = 16\n")
        out = root / f"{name}.llmcx"
        done = run([llmc, "compile", toml, "--forward", "-o", out])
        if done.returncode:
            raise RuntimeError(done.stderr)
        return out

    forward = artifact("forward", good)

    def load(name, folder, status, *messages, exe=forward):
        expect(name, run([llmc_run, exe, "--weights", folder, "--inputs", batch]), status,
               *messages)

    q = "model.layers.0.self_attn.q_proj.weight"
    # 1. fp8 (and int8) tensors: a quantized checkpoint.
    fp8 = dict(weights)
    fp8[q] = weights[q].astype(ml_dtypes.float8_e4m3fn)
    folder = root / "fp8"
    hf_files.write_folder(folder, config, weights)
    hf_files.write_safetensors(folder / "model.safetensors", fp8)
    load("fp8 tensor", folder, 1,
         f"{folder}/model.safetensors: tensor '{q}' has dtype F8_E4M3 (a quantized "
         "checkpoint's), which llmc cannot load (it loads F32, F64, BF16, F16, I32, I64 and "
         "BOOL); use the model's bf16, f16 or f32 release")

    # 2. A renamed tensor: missing and unused in one message; strict = false
    # loads despite the unused one only when nothing is missing.
    renamed = hf_files.write_folder(root / "renamed", config, weights,
                                    names=lambda n: n.replace("model.norm.", "model.final_norm."))
    load("missing and unused", renamed, 1,
         f"{renamed}: the weights do not fit the model: missing 1 tensor(s) the model needs: "
         "model.norm.weight; 1 tensor(s) the model does not use: model.final_norm.weight; check "
         "that config.json belongs to these weights")
    extra = dict(weights, **{"model.extra.weight": weights["model.norm.weight"]})
    unused = hf_files.write_folder(root / "unused", config, extra)
    load("unused, strict", unused, 1,
         f"{unused}: the weights do not fit the model: 1 tensor(s) the model does not use: "
         "model.extra.weight; check that config.json belongs to these weights, or set strict = "
         "false in [model] to load them anyway (unused tensors become a warning)")
    lenient = artifact("lenient", unused, "strict = false\n")
    load("unused, strict = false", unused, 0,
         f"warning: {unused}: 1 tensor(s) the model does not use (strict = false): "
         "model.extra.weight", "loss = ", exe=lenient)

    # 3. A tied model whose file has a head of its own.
    tied_config = hf_files.CONFIGS["llama-tied"]
    tied_weights = hf_files.draw_weights(tied_config, 1)
    tied = hf_files.write_folder(root / "tied", tied_config, tied_weights)
    tied_exe = artifact("tied", tied)
    other = dict(tied_weights, **{"lm_head.weight": -tied_weights["model.embed_tokens.weight"]})
    untied = hf_files.write_folder(root / "untied", tied_config, other)
    load("tied head that is not the embedding", untied, 1,
         f"{untied}: 'lm_head.weight' (f32[128, 32]) differs from the embedding "
         "'model.embed_tokens.weight' (f32[128, 32]), but the model ties them "
         "(tie_word_embeddings); set \"tie_word_embeddings\": false in config.json for a model "
         "with its own head", exe=tied_exe)

    # 4. The weights of another size.
    wide = dict(weights)
    wide[q] = np.zeros((48, 32), np.float32)
    shaped = hf_files.write_folder(root / "shape", config, wide)
    load("wrong shape", shaped, 1,
         f"{shaped}: the weights do not fit the model: 1 tensor(s) of the wrong shape or type: "
         f"'{q}' is f32[48, 32] where '{q}' needs [32, 32]; check that config.json belongs to "
         "these weights")

    # 5. Broken shard indexes.
    sharded = hf_files.write_folder(root / "sharded", config, weights, shards=2)
    (sharded / "model-00002-of-00002.safetensors").unlink()
    load("index lists a missing shard", sharded, 1,
         f"{sharded}/model-00002-of-00002.safetensors: cannot open: No such file or directory; "
         f"check the path (a shard {sharded}/model.safetensors.index.json lists)")
    moved = hf_files.write_folder(root / "moved", config, weights, shards=2)
    index_path = moved / "model.safetensors.index.json"
    index = json.loads(index_path.read_text())
    where = moved / index["weight_map"]["model.norm.weight"]
    wrong = next(f.name for f in sorted(moved.glob("model-*")) if f != where)
    index["weight_map"]["model.norm.weight"] = wrong
    index_path.write_text(json.dumps(index))
    load("index puts a tensor in the wrong shard", moved, 1,
         f"{index_path} puts 'model.norm.weight' in {moved}/{wrong}, which has no such "
         f"tensor (it is in {where}); the index does not match its shards")

    # 6. Dropout: refused for a training step, fine for a forward program,
    # turned off by [model] dropout = 0.0.
    gpt2 = dict(hf_files.CONFIGS["gpt2"])
    del gpt2["resid_pdrop"], gpt2["attn_pdrop"], gpt2["embd_pdrop"]
    gpt2["resid_pdrop"] = 0.1
    dropout = hf_files.write_folder(root / "dropout", gpt2,
                                    hf_files.draw_weights(hf_files.CONFIGS["gpt2"], 2))
    cfg = dropout / "config.json"
    line = next(i for i, text in enumerate(cfg.read_text().splitlines(), 1)
                if '"resid_pdrop"' in text)
    expect("dropout refused for training", run([llmc, "compile", dropout, "-o",
                                                root / "d.llmcx"]), 1,
           f"{cfg}:1:1: error: expected embd_pdrop = 0 for training, got 0.1 (transformers' "
           "default: config.json does not set it); llmc does not implement dropout: add "
           "\"embd_pdrop\": 0.0 in config.json, or add dropout = 0.0 to [model] of the run "
           "description to train without it",
           f"{cfg}:{line}:3: error: expected resid_pdrop = 0 for training, got 0.1; llmc does "
           "not implement dropout: set \"resid_pdrop\": 0.0 in config.json")
    expect("dropout fine for a forward program",
           run([llmc, "compile", dropout, "--forward", "--seq-len", "16", "-o",
                root / "d.llmcx"]), 0)
    off = root / "dropout-off.toml"
    off.write_text(f'[model]\nhf = "{dropout}"\ndropout = 0.0\n[train]\nseq_len = 16\n'
                   "steps = 1\n")
    expect("dropout = 0.0 trains", run([llmc, "train", off]), 0, "step 1/1")

    # 7. A folder as the input of train, inspect, compile.
    expect("llmc train FOLDER", run([llmc, "train", good, "--steps", "1"]), 0, "step   1/100",
           f"weights: 21 parameters from {good} (1 file(s), 0 converted)")
    expect("llmc inspect FOLDER", run([llmc, "inspect", good]), 0,
           f"parameters of {good} (llama)")
    pickle = root / "pickle"
    pickle.mkdir()
    (pickle / "config.json").write_text(json.dumps(config))
    (pickle / "pytorch_model.bin").write_bytes(b"")
    expect("pytorch_model.bin", run([llmc, "compile", pickle]), 1,
           f"'{pickle}' holds pytorch_model.bin, which llmc does not read (a pickle); save it "
           "as safetensors first (model.save_pretrained(DIR, safe_serialization=True) in "
           "transformers)")
    yarn = dict(config, rope_scaling={"rope_type": "yarn", "factor": 4.0})
    yarn_folder = hf_files.write_folder(root / "yarn", yarn, weights)
    expect("yarn rope scaling", run([llmc, "compile", yarn_folder]), 1,
           "error: expected rope_type \"default\" or \"llama3\" in rope_scaling, got \"yarn\"")

    # 8. Export's own errors.
    ck = root / "ck"
    expect("train for a checkpoint",
           run([llmc, "train", good, "--steps", "1", "--checkpoint-dir", ck]), 0)
    step = ck / "step-00000001"
    (step / "config.json").unlink()
    expect("export without config.json", run([llmc, "export", ck, "-o", root / "x"]), 1,
           f"llmc export: {step}: no config.json, so nothing says which Hugging Face model "
           "these tensors are")
    expect("export --dtype", run([llmc_run, "export", ck, "-o", root / "x", "--dtype", "f8"]),
           2, "llmc-run export: --dtype expects f32, bf16 or f16, got 'f8'")
    expect("export --shard-size", run([llmc, "export", ck, "-o", root / "x", "--shard-size",
                                       "big"]), 2,
           "llmc export: --shard-size expects a size such as 5GB, 500MB or 2GiB, got 'big'")
    check_none = not (root / "x").exists()
    if not check_none:
        failures.append("a failed export left its folder")
    print(f"{len(failures)} failure(s)" if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
