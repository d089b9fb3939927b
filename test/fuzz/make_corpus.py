"""Writes the seed corpora of the libFuzzer targets into test/fuzz/corpus/.

    .venv/bin/python test/fuzz/make_corpus.py [--llmc build/bin/llmc]
        [--seed-executables build-fuzz/bin/fuzz-seed-executables]

The seeds are small valid inputs taken from the tests and examples (run
descriptions, config.json files) or written here the way the tests write
them (safetensors files, token shards, tokenizers trained by the
`tokenizers` package, checkpoints' optimizer files, compiled artifacts
shrunk by fuzz-seed-executables). The output is committed; run this again
only to change the seeds.
"""
import argparse
import json
import pathlib
import shutil
import struct
import subprocess
import tempfile

import numpy as np
from safetensors.numpy import save

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = ROOT / "test" / "fuzz" / "corpus"


def fresh(name):
    path = CORPUS / name
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def run_descriptions():
    out = fresh("run-description")
    files = sorted(ROOT.glob("examples/*.toml")) + sorted(
        ROOT.glob("test/**/Inputs/*.toml"))
    for i, path in enumerate(files):
        shutil.copy(path, out / f"{i:02d}-{path.name}")


def hf_configs():
    out = fresh("hf-config")
    files = sorted(ROOT.glob("examples/hf/*.json")) + sorted(
        ROOT.glob("test/frontend/Inputs/*.json"))
    for i, path in enumerate(files):
        shutil.copy(path, out / f"{i:02d}-{path.name}")


def tokenizers_():
    from tokenizers import (Tokenizer, decoders, models, normalizers,
                            pre_tokenizers, processors, trainers)
    out = fresh("tokenizer")
    corpus = ["Once there was a small boat. \"Where is my goat,\" said the "
              "kite.", "def f(x):\n    return x ** 2  # 123\n", "caf\u00e9 "
              "na\u00efve \u00fcber \u4e2d\u6587 emoji \U0001f600"] * 4

    byte_level = Tokenizer(models.BPE())
    byte_level.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    byte_level.decoder = decoders.ByteLevel()
    byte_level.post_processor = processors.ByteLevel(trim_offsets=False)
    byte_level.train_from_iterator(corpus, trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    (out / "gpt2-byte-level.json").write_text(byte_level.to_str())

    fallback = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True,
                                    fuse_unk=True))
    fallback.normalizer = normalizers.Sequence([
        normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")])
    fallback.decoder = decoders.Sequence([
        decoders.Replace("\u2581", " "), decoders.ByteFallback(),
        decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    fallback.train_from_iterator(corpus, trainers.BpeTrainer(
        vocab_size=120, special_tokens=["<unk>", "<s>", "</s>"] +
        [f"<0x{b:02X}>" for b in range(256)]))
    fallback.post_processor = processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", 1)])
    (out / "llama2-byte-fallback.json").write_text(fallback.to_str())

    split = Tokenizer(models.BPE(ignore_merges=True))
    split.normalizer = normalizers.NFC()
    split.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(
            r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}",
            behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    split.decoder = decoders.ByteLevel()
    split.train_from_iterator(corpus, trainers.BpeTrainer(
        vocab_size=290, special_tokens=["<|begin_of_text|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    (out / "llama3-split.json").write_text(split.to_str())


def safetensors_files():
    out = fresh("safetensors")
    rng = np.random.default_rng(0)
    (out / "f32-metadata.safetensors").write_bytes(save(
        {"a": rng.standard_normal((2, 3)).astype(np.float32),
         "b": np.arange(4, dtype=np.int64)}, metadata={"format": "pt"}))
    (out / "mixed.safetensors").write_bytes(save(
        {"h": rng.standard_normal(5).astype(np.float16),
         "i": np.arange(3, dtype=np.int32), "u": np.arange(2, dtype=np.uint8),
         "s": np.array(1.5, dtype=np.float64),
         "e": np.zeros((0, 4), dtype=np.float32)}))
    (out / "empty.safetensors").write_bytes(save({}))


def token_shards():
    out = fresh("token-shard")

    def shard(magic, version, tokens, dtype):
        header = np.zeros(256, dtype=np.int32)
        header[:3] = [magic, version, len(tokens)]
        return header.tobytes() + np.asarray(tokens, dtype=dtype).tobytes()

    # The first byte picks the format (FuzzTokenShard.cpp): 0 auto, 1
    # tokens, 2 u16, 3 text, 4 text through a byte encoder.
    ids = [1, 2, 300, 7, 65535 % 1000]
    (out / "auto-u16.bin").write_bytes(b"\0" + shard(20240520, 1, ids, "<u2"))
    (out / "tokens-u32.bin").write_bytes(b"\1" + shard(20240801, 7, ids, "<u4"))
    (out / "tokens-u32-v2.bin").write_bytes(
        b"\1" + shard(20240801, 2, ids, "<u4"))
    (out / "u16.bin").write_bytes(b"\2" + np.asarray(ids, "<u2").tobytes())
    (out / "text.bin").write_bytes(b"\3Once there was a goat.\n")
    (out / "encoded.bin").write_bytes(b"\4caf\xc3\xa9\n")


def checkpoints():
    out = fresh("checkpoint")
    moments = {"optimizer.m.w": np.full(4, 0.5, np.float32),
               "optimizer.v.w": np.full(4, 0.25, np.float32)}
    meta = {"format": "llmc-checkpoint-1", "step": "3", "seed": "1337",
            "data_position": "96", "source": "run.toml"}
    (out / "old.safetensors").write_bytes(save(moments, metadata=meta))
    meta.update({"data.epoch": "0", "data.shard": "1", "data.offset": "96",
                 "data.batch": "3", "data.seed": "1337", "data.shards": "2",
                 "data.tokens": "4096"})
    (out / "current.safetensors").write_bytes(save(moments, metadata=meta))
    moments["optimizer.v.w"] = np.full(3, 0.25, np.float32)
    (out / "wrong-shape.safetensors").write_bytes(save(moments, metadata=meta))


def executables(llmc, seeder):
    out = fresh("executable")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        (tmp / "tiny.mlir").write_text(
            "func.func @loss(%a: tensor<4xf32>, %b: tensor<4xf32>) -> "
            "tensor<f32> {\n  %c = llmc.mul %a, %b : tensor<4xf32>\n"
            "  %s = llmc.reduce_sum %c dims [0] : tensor<4xf32> -> tensor<f32>"
            "\n  return %s : tensor<f32>\n}\n")
        sources = {"tiny": tmp / "tiny.mlir",
                   "train-dp2": ROOT / "test/tools/Inputs/train-tiny-dp2.toml"}
        for name, source in sources.items():
            artifact = tmp / f"{name}.llmcx"
            subprocess.run([llmc, "compile", source, "-o", artifact,
                            "--quiet"], check=True, cwd=tmp)
            subprocess.run([seeder, artifact, out / name], check=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--llmc", default=ROOT / "build/bin/llmc")
    parser.add_argument("--seed-executables",
                        default=ROOT / "build-fuzz/bin/fuzz-seed-executables")
    args = parser.parse_args()
    run_descriptions()
    hf_configs()
    tokenizers_()
    safetensors_files()
    token_shards()
    checkpoints()
    executables(args.llmc, args.seed_executables)
    for path in sorted(CORPUS.iterdir()):
        files = list(path.iterdir())
        print(f"{path.name}: {len(files)} seeds, "
              f"{sum(f.stat().st_size for f in files)} bytes")


if __name__ == "__main__":
    main()
