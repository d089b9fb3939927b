"""Writes llm.c token shards for the lit tests of [data] (stdlib only).

    python3 make_shards.py TEXT DIR [--train-shards N] [--shard-tokens N]
                                    [--val-tokens N] [--format v1|v2|u16]

The bytes of TEXT are the tokens (vocabulary 256): the first N*shard_tokens
go to DIR/train_000000.bin ..., the next val_tokens to DIR/val_000000.bin.
v1: magic 20240520, version 1, uint16; v2: magic 20240801, version 7,
uint32, each token + 1000 (so that no id fits a byte: the model needs a
vocabulary of at least 1256); u16: nanoGPT's headerless uint16 train.bin
(DIR/train.bin and DIR/val.bin).
"""
import argparse
import pathlib
import struct


def write(path, tokens, fmt):
    if fmt == "u16":
        path.write_bytes(struct.pack(f"<{len(tokens)}H", *tokens))
        return
    magic, version, code = (20240520, 1, "H") if fmt == "v1" else (20240801, 7, "I")
    header = struct.pack("<3i", magic, version, len(tokens)) + bytes(4 * 253)
    path.write_bytes(header + struct.pack(f"<{len(tokens)}{code}", *tokens))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("text")
    p.add_argument("dir")
    p.add_argument("--train-shards", type=int, default=3)
    p.add_argument("--shard-tokens", type=int, default=150)
    p.add_argument("--val-tokens", type=int, default=200)
    p.add_argument("--format", default="v1", choices=["v1", "v2", "u16"])
    a = p.parse_args()
    data = list(pathlib.Path(a.text).read_bytes())
    offset = 1000 if a.format == "v2" else 0
    out = pathlib.Path(a.dir)
    out.mkdir(parents=True, exist_ok=True)
    n = a.shard_tokens
    need = a.train_shards * n + a.val_tokens
    assert len(data) >= need, f"{a.text} has {len(data)} bytes, need {need}"
    for i in range(a.train_shards):
        name = "train.bin" if a.format == "u16" else f"train_{i:06d}.bin"
        write(out / name, [t + offset for t in data[i * n:(i + 1) * n]], a.format)
    val = data[a.train_shards * n:need]
    write(out / ("val.bin" if a.format == "u16" else "val_000000.bin"),
          [t + offset for t in val], a.format)


if __name__ == "__main__":
    main()
