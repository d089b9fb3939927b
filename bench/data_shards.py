"""Text shards for bench/data.sh (issue #22): the project's own text as GPT-2
token shards, with nothing downloaded.

    .venv/bin/python bench/data_shards.py LLMC OUT

Trains a GPT-2-style byte-level BPE (8,192 ids, <|endoftext|>) with the
`tokenizers` package on the repository's sources and docs, then runs
`llmc tokenize --eot --val-fraction 0.05` over the same files into OUT
(train_*.bin, val_*.bin, tokenizer.json). The text is small (a few MB), so
the training run wraps around it; what the benchmark measures is the cost of
reading shards (mapped, shuffled windows, read ahead), which does not
depend on the corpus size.
"""
import pathlib
import subprocess
import sys

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

root = pathlib.Path(__file__).resolve().parent.parent
llmc, out = sys.argv[1], pathlib.Path(sys.argv[2])
out.mkdir(parents=True, exist_ok=True)
files = sorted(str(p) for p in root.rglob("*")
               if p.is_file() and p.suffix in {".md", ".cpp", ".h", ".py", ".td", ".mlir", ".cu", ".cuh"}
               and not any(part.startswith((".", "build")) for part in p.relative_to(root).parts))
tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tok.decoder = decoders.ByteLevel()
tok.post_processor = processors.ByteLevel(trim_offsets=False)
tok.train(files, trainers.BpeTrainer(
    vocab_size=8192, special_tokens=["<|endoftext|>"],
    initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
tok.save(str(out / "tokenizer.json"))
subprocess.run([llmc, "tokenize", "--tokenizer", str(out / "tokenizer.json"), *files,
                "-o", str(out), "--eot", "--val-fraction", "0.05",
                "--shard-tokens", "1000000"], check=True)
