#!/usr/bin/env python3
"""`llmc tokenize` end to end, against the tokenizers package.

With tokenizers trained in the test (tokenizer_parity.py's GPT-2 and LLaMA 3
styles, on docs/*.md), it runs `llmc tokenize` and reads the shards back:

  1. the header (magic, version, count) and uint16 tokens of a GPT-2-style
     vocabulary; the token stream equals the package's ids of each file with
     <|endoftext|> between files (--eot), and nothing before the first;
  2. --shard-tokens: every shard holds exactly N tokens but the last, and
     the shards joined are the same stream;
  3. --lines --val-fraction 0.25 of 8 lines: lines 3 and 7 (from 0) go to
     val, each split with its own end-of-text tokens between documents;
  4. one file with --val-fraction 0.1: its first ceil(0.1 T) tokens are val;
  5. a vocabulary past 65536 ids (a token with id 70000): uint32 shards,
     magic 20240801 and version 7, the id 70000 in them;
  6. --threads 1 and --threads 3 write the same bytes;
  7. errors before any work, with the path named: a missing input, an
     output folder holding shards, --eot without an end-of-text token, text
     that is not UTF-8 (the file, byte and line).
"""

import argparse
import glob
import json
import math
import os
import shutil
import struct
import subprocess
import sys

from tokenizers import Tokenizer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tokenizer_parity as parity  # noqa: E402

FAILURES = []


def check(condition, message):
    if not condition:
        FAILURES.append(message)
        print("FAIL " + message)


def read_shard(path):
    with open(path, "rb") as f:
        data = f.read()
    magic, version, count = struct.unpack("<3i", data[:12])
    width = {20240520: 2, 20240801: 4}.get(magic)
    if width is None:
        return magic, version, count, None
    tokens = list(struct.unpack("<%d%s" % (count, "H" if width == 2 else "I"),
                                data[1024:1024 + count * width]))
    check(len(data) == 1024 + count * width,
          "%s: %d bytes, header says %d tokens of %d bytes" %
          (path, len(data), count, width))
    check(struct.unpack("<253i", data[12:1024]) == (0,) * 253,
          path + ": header words 3..255 are not zero")
    return magic, version, count, tokens


def read_split(out, split):
    paths = sorted(glob.glob(os.path.join(out, split + "_*.bin")))
    shards = [read_shard(p) for p in paths]
    return paths, shards, [t for s in shards for t in (s[3] or [])]


class Runner:
    def __init__(self, llmc, workdir):
        self.llmc, self.workdir, self.count = llmc, workdir, 0

    def __call__(self, *args, expect_ok=True):
        self.count += 1
        out = os.path.join(self.workdir, "out%d" % self.count)
        result = subprocess.run([self.llmc, "tokenize", *args, "-o", out],
                                capture_output=True, text=True)
        if expect_ok and result.returncode != 0:
            sys.exit("llmc tokenize %s failed: %s" % (" ".join(args),
                                                      result.stderr))
        return out, result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llmc", required=True)
    parser.add_argument("--docs", required=True)
    parser.add_argument("--workdir", required=True)
    args = parser.parse_args()
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    run = Runner(args.llmc, args.workdir)

    files = sorted(glob.glob(os.path.join(args.docs, "*.md")))
    corpus = [open(f, encoding="utf-8").read() for f in files]
    gpt2_path = os.path.join(args.workdir, "gpt2.json")
    with open(gpt2_path, "w", encoding="utf-8") as f:
        json.dump(parity.train_gpt2(corpus), f, ensure_ascii=False)
    gpt2 = Tokenizer.from_file(gpt2_path)
    eot = gpt2.token_to_id("<|endoftext|>")

    def ids(tok, text):
        return tok.encode(text, add_special_tokens=False).ids

    # 1. Three files, --eot.
    inputs = files[:3]
    out, result = run("--tokenizer", gpt2_path, *inputs, "--eot")
    want = []
    for i, path in enumerate(inputs):
        want += ([eot] if i else []) + ids(gpt2, open(path, encoding="utf-8").read())
    paths, shards, stream = read_split(out, "train")
    check(paths == [os.path.join(out, "train_000000.bin")],
          "one train shard expected, got %s" % paths)
    check(shards[0][:3] == (20240520, 1, len(want)),
          "uint16 header: got %s, want (20240520, 1, %d)" % (shards[0][:3],
                                                             len(want)))
    check(stream == want, "the stream is not the package's ids of the files "
          "with <|endoftext|> between them")
    check(not glob.glob(os.path.join(out, "val_*")), "val shards without "
          "--val-fraction")
    check("3 files" in result.stdout and "uint16" in result.stdout,
          "summary: " + result.stdout)

    # 2. Shard boundaries.
    out, _ = run("--tokenizer", gpt2_path, *inputs, "--eot",
                 "--shard-tokens", "1000")
    paths, shards, joined = read_split(out, "train")
    check(joined == want, "--shard-tokens 1000: the shards joined differ")
    check(len(paths) == math.ceil(len(want) / 1000),
          "--shard-tokens 1000: %d shards for %d tokens" % (len(paths),
                                                           len(want)))
    check(all(s[2] == 1000 for s in shards[:-1]) and
          shards[-1][2] == len(want) - 1000 * (len(paths) - 1),
          "--shard-tokens 1000: shard sizes %s" % [s[2] for s in shards])

    # 3. --lines and the val documents.
    lines = ["line %d: it's %d%s" % (i, i * 1234567, " 日本" * i)
             for i in range(8)]
    text_path = os.path.join(args.workdir, "lines.txt")
    with open(text_path, "w", encoding="utf-8") as f:
        f.write("\n\n".join(lines[:4]) + "\r\n" + "\n".join(lines[4:]) + "\n")
    out, _ = run("--tokenizer", gpt2_path, text_path, "--lines", "--eot",
                 "--val-fraction", "0.25")

    def joined_docs(docs):
        stream = []
        for i, doc in enumerate(docs):
            stream += ([eot] if i else []) + ids(gpt2, doc)
        return stream
    val_docs = [lines[3], lines[7]]  # floor((i+1)*2/8) > floor(i*2/8)
    train_docs = [l for i, l in enumerate(lines) if i not in (3, 7)]
    check(read_split(out, "val")[2] == joined_docs(val_docs),
          "--val-fraction 0.25 of 8 lines: val is not lines 3 and 7")
    check(read_split(out, "train")[2] == joined_docs(train_docs),
          "--val-fraction 0.25 of 8 lines: train is not the other lines")

    # 4. One document: its leading tokens are val.
    out, _ = run("--tokenizer", gpt2_path, files[0], "--val-fraction", "0.1")
    doc = ids(gpt2, open(files[0], encoding="utf-8").read())
    cut = math.ceil(0.1 * len(doc))
    check(read_split(out, "val")[2] == doc[:cut] and
          read_split(out, "train")[2] == doc[cut:],
          "one document, --val-fraction 0.1: val is not its first %d tokens"
          % cut)

    # 5. A vocabulary past 16 bits.
    big = parity.train_llama3(corpus)
    big["model"]["vocab"]["Ġzqxjw"] = 70000
    big_path = os.path.join(args.workdir, "big.json")
    with open(big_path, "w", encoding="utf-8") as f:
        json.dump(big, f, ensure_ascii=False)
    big_tok = Tokenizer.from_file(big_path)
    big_text = os.path.join(args.workdir, "big.txt")
    with open(big_text, "w", encoding="utf-8") as f:
        f.write("a zqxjw b zqxjw")
    out, _ = run("--tokenizer", big_path, big_text, "--eot")
    _, shards, stream = read_split(out, "train")
    check(shards and shards[0][:2] == (20240801, 7),
          "uint32 header: got %r" % ((shards[0][:3] if shards else None),))
    check(stream == ids(big_tok, "a zqxjw b zqxjw") and 70000 in stream,
          "uint32 shard: %s" % stream)

    # 6. Threads do not change the bytes.
    outs = []
    for threads in ["1", "3"]:
        out, _ = run("--tokenizer", gpt2_path, *files, "--lines", "--eot",
                     "--val-fraction", "0.05", "--shard-tokens", "20000",
                     "--threads", threads)
        outs.append(out)
    names = sorted(os.listdir(outs[0]))
    check(names == sorted(os.listdir(outs[1])) and len(names) > 2 and all(
        open(os.path.join(outs[0], n), "rb").read() ==
        open(os.path.join(outs[1], n), "rb").read() for n in names),
        "--threads 1 and --threads 3 wrote different shards")

    # 7. Errors.
    missing = os.path.join(args.workdir, "missing.txt")
    out, result = run("--tokenizer", gpt2_path, files[0], missing,
                      expect_ok=False)
    check(result.returncode == 1 and
          missing + ": cannot open: No such file" in result.stderr and
          not os.path.exists(out),
          "missing input: exit %d, %r" % (result.returncode, result.stderr))
    out, result = run("--tokenizer", gpt2_path, files[0])
    result = subprocess.run([args.llmc, "tokenize", "--tokenizer", gpt2_path,
                             files[0], "-o", out], capture_output=True,
                            text=True)
    check(result.returncode == 1 and "already holds shards" in result.stderr,
          "existing shards: %r" % result.stderr)
    no_eot = json.load(open(gpt2_path, encoding="utf-8"))
    no_eot["added_tokens"] = []
    del no_eot["model"]["vocab"]["<|endoftext|>"]
    no_eot_path = os.path.join(args.workdir, "no-eot.json")
    with open(no_eot_path, "w", encoding="utf-8") as f:
        json.dump(no_eot, f, ensure_ascii=False)
    out, result = run("--tokenizer", no_eot_path, files[0], "--eot",
                      expect_ok=False)
    check(result.returncode == 1 and "declares no end-of-text token" in
          result.stderr and "leave out --eot" in result.stderr,
          "--eot without one: %r" % result.stderr)
    latin1 = os.path.join(args.workdir, "latin1.txt")
    with open(latin1, "wb") as f:
        f.write(b"caf\xc3\xa9\nna\xefve\n")
    out, result = run("--tokenizer", gpt2_path, latin1, expect_ok=False)
    check(result.returncode == 1 and
          latin1 + ": byte 8 (line 2) is not UTF-8" in result.stderr,
          "not UTF-8: %r" % result.stderr)

    print("llmc tokenize: %d runs, %d failures" % (run.count, len(FAILURES)))
    if FAILURES:
        sys.exit(1)


if __name__ == "__main__":
    main()
