#!/usr/bin/env python3
"""Encoding speed of `llmc tokenize` per core, beside the tokenizers package.

The corpus is the project's own text (every tracked .cpp, .h, .md, .py,
.td, .mlir, .toml, .txt and .cmake file, concatenated: about 4 MB of code
and prose, in README order of `git ls-files`), repeated --repeat times. On
it the script trains, with the package, a GPT-2-style byte-level BPE, a
LLaMA-3-style one (Split regex + ByteLevel) and a LLaMA-2-style one
(byte fallback), each with --vocab ids (docs/tokenizer.md, "Speed"), then
times, for each:

  llmc      `llmc tokenize --threads 1 --lines` (one core; the summary's
            MB/s, which excludes loading the tokenizer)
  package   Tokenizer.encode_batch over the same lines with
            RAYON_NUM_THREADS=1 (one core)

and checks that both give the same number of tokens. Run from the checkout:

  .venv/bin/python bench/tokenize_speed.py --llmc build/bin/llmc
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

os.environ["RAYON_NUM_THREADS"] = "1"  # before tokenizers starts its pool
os.environ["TOKENIZERS_PARALLELISM"] = "false"

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "test",
                                "text"))
import tokenizer_parity as parity  # noqa: E402  (the same trainers)
from tokenizers import Tokenizer  # noqa: E402


def corpus_text(root):
    files = subprocess.run(["git", "-C", root, "ls-files"], check=True,
                           capture_output=True, text=True).stdout.split()
    keep = re.compile(r"\.(cpp|h|md|py|td|mlir|toml|txt|cmake)$")
    parts = []
    for name in files:
        if keep.search(name):
            with open(os.path.join(root, name), encoding="utf-8",
                      errors="replace") as f:
                parts.append(f.read())
    return "".join(parts)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llmc", default="build/bin/llmc")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--vocab", type=int, default=16000)
    parser.add_argument("--runs", type=int, default=3,
                        help="timed runs of each; the best is reported")
    args = parser.parse_args()
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    text = corpus_text(root)
    work = tempfile.mkdtemp(prefix="llmc-tokenize-speed-")
    corpus = os.path.join(work, "corpus.txt")
    with open(corpus, "w", encoding="utf-8") as f:
        f.write(text * args.repeat)
    lines = [line.rstrip("\r") for line in (text * args.repeat).split("\n")]
    lines = [line for line in lines if line]
    size = os.path.getsize(corpus)
    print("corpus: %.1f MB, %d lines" % (size / 1e6, len(lines)))

    chunks = [text[i:i + 100000] for i in range(0, len(text), 100000)]
    for name, trainer in [("gpt2", parity.train_gpt2),
                          ("llama3", parity.train_llama3),
                          ("llama2", parity.train_llama2)]:
        config = trainer(chunks, vocab_size=args.vocab)
        path = os.path.join(work, name + ".json")
        with open(path, "w", encoding="utf-8") as f:
            import json
            json.dump(config, f, ensure_ascii=False)
        tok = Tokenizer.from_file(path)
        best_package = None
        for _ in range(args.runs):
            start = time.perf_counter()
            encodings = tok.encode_batch(lines, add_special_tokens=False)
            seconds = time.perf_counter() - start
            best_package = min(best_package or seconds, seconds)
        package_tokens = sum(len(e.ids) for e in encodings)
        best_llmc, llmc_tokens = None, None
        for run in range(args.runs):
            out = os.path.join(work, "%s-shards-%d" % (name, run))
            summary = subprocess.run(
                [args.llmc, "tokenize", "--tokenizer", path, corpus, "-o", out,
                 "--threads", "1", "--lines"], check=True, capture_output=True,
                text=True).stdout
            match = re.search(r"-> ([\d,]+) tokens .* in ([\d.]+) s", summary)
            llmc_tokens = int(match.group(1).replace(",", ""))
            seconds = float(match.group(2))
            best_llmc = min(best_llmc or seconds, seconds)
        print("%-7s llmc %5.1f MB/s   package %5.1f MB/s   (%d tokens%s)" % (
            name, size / best_llmc / 1e6, size / best_package / 1e6,
            llmc_tokens,
            "" if llmc_tokens == package_tokens else
            ", PACKAGE GIVES %d" % package_tokens))
        if llmc_tokens != package_tokens:
            sys.exit("token counts differ")


if __name__ == "__main__":
    main()
