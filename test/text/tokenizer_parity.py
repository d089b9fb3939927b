#!/usr/bin/env python3
"""llmc's tokenizer against the Hugging Face `tokenizers` package, id for id.

The test trains, with the package, on the project's docs/*.md (nothing is
downloaded):

  gpt2    byte-level BPE with GPT-2's pre-tokenizer and <|endoftext|>
  llama3  LLaMA 3's Split regex + ByteLevel(use_regex=False), ignore_merges,
          a TemplateProcessing BOS
  llama2  SentencePiece-style BPE with byte fallback: Prepend("▁") and
          Replace(" ", "▁") normalizers, <unk>/<s>/</s>, <0x00>..<0xFF>,
          the Replace/ByteFallback/Fuse/Strip decoders

then derives variants by editing the saved tokenizer.json (GPT-2 with
add_prefix_space and with added tokens that use lstrip/rstrip/single_word/
normalized, Qwen 2's NFC normalizer and pattern, every Split behaviour and
invert, the Metaspace pre-tokenizer forms of newer LLaMA 2 / Mistral files,
byte_fallback off with and without fuse_unk, merges as "a b" strings). For
each it encodes held-out text (CJK, accents composed and decomposed, emoji,
whitespace runs, newlines, digit runs, contractions, special tokens inside
the text, the start of a held-out doc, seeded random strings) with and without the
post-processor's tokens, and decodes those ids and random id sequences with
and without special tokens. llmc's answers come from llmc-tokenizer-probe.

Why it can fail: every variant must encode some held-out text differently
from its base in the package (so a loader that ignored the option would be
caught), and the texts must exercise byte fallback, unk, the added tokens
and invalid UTF-8 in decoding (checked below, or the test fails).
"""

import argparse
import copy
import glob
import json
import os
import random
import subprocess
import sys
import time

from tokenizers import (AddedToken, Regex, Tokenizer, decoders, models,
                        normalizers, pre_tokenizers, processors, trainers)

LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|"
                  r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|"
                  r"\s+(?!\S)|\s+")
QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|"
                 r"\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")

# How much of the held-out doc is encoded (see main).
HELD_OUT_DOC_CHARS = 16000

HELD_OUT = [
    "Hello world! It's a test: we've, they'll, I'M, you'd, she's, THEY'RE.",
    "Numbers 1234567890 and 3.14159, 2026-12-02, 1,000,000 tokens/s; 42x.",
    "日本語のテキストと中文文本，还有한국어 텍스트。",
    "Accents: café naïve résumé Ångström Øre ÇA; decomposed: cafe\u0301 "
    "nai\u0308ve A\u030angstro\u0308m; Hangul jamo \u1100\u1161\u11a8.",
    "Emoji 😀🎉👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 and symbols ∑∫√∞ ≠ ≤ → ⇒ ★ ♥.",
    "   leading spaces, trailing spaces   ",
    "tabs\tand\t\tmore\t\t\ttabs, a\u00a0no-break space, an ideographic"
    "\u3000space, a thin\u2009space",
    "line one\nline two\n\nafter a blank line\r\nwindows line\n\n\n   "
    "indented\n",
    "def f(x):\n    return x ** 2  # comment\n\n\tif x:\n\t\tpass\n",
    "Special <|endoftext|>inside<|endoftext|> and <s> a </s> mid <unk> "
    "text; <|begin_of_text|>x<|end_of_text|>",
    "<|endoftext|>", "<s>", "  <s>  ", "a<s>b</s>c",
    "hello world hello  world mask masked unmask <tab>  tabs  <tab>x",
    "a <mask> b<mask>c <mask>",
    "a<Ġx>b <Ġx> zqxj zqxjzqxj",
    "punctuation!!! ??? ... --- ((( ))) [[[ ]]] {{{ }}} \"quotes\" 'single'",
    "ſtraße İstanbul ǅ ﬁ ﬀ Ⅻ ² ½ ٣٤٥ ১২৩",
    "x" * 300 + " " + "ab" * 200,
    " ",
    "",
    "\n",
    "a",
    "Mixed: llmc compiles the training step; `llmc tokenize --tokenizer "
    "T.json FILE -o DIR` writes shards.",
]


def random_texts(seed, count):
    """Strings drawn from ranges that stress the pre-tokenizers."""
    rng = random.Random(seed)
    pools = [
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "0123456789", " \t\n\r\u00a0\u3000", ".,;:!?'\"-_()[]{}<>/\\|@#$%^&*",
        "éèêëàâäîïôöùûüçñßøåæœ", "日本語中文字한국어", "😀🎉👍🏽‍♥️",
        "\u0301\u0308\u200d\ufe0f", "'s'S'll'LL'd've",
        "<|endoftext|>", "<s>", "</s>", " hello world", "<tab>", " mask ",
    ]
    texts = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(1, 40)):
            pool = rng.choice(pools)
            if len(pool) > 12 and pool[0] == "<" or pool.startswith(" "):
                parts.append(pool)
            else:
                parts.append("".join(rng.choice(pool)
                                     for _ in range(rng.randint(1, 6))))
        texts.append("".join(parts))
    return texts


def train(tokenizer, trainer, corpus):
    tokenizer.train_from_iterator(corpus, trainer)
    return json.loads(tokenizer.to_str())


def train_gpt2(corpus, vocab_size=1500):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    return train(tok, trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False), corpus)


def train_llama3(corpus, vocab_size=1500):
    tok = Tokenizer(models.BPE(ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3_PATTERN), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    config = train(tok, trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<|begin_of_text|>", "<|end_of_text|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False), corpus)
    bos = config["added_tokens"][0]["id"]
    # A word that is a token but that no merge builds, as LLaMA 3 has some:
    # ignore_merges makes it one token.
    vocab = config["model"]["vocab"]
    vocab["Ġzqxj"] = max(vocab.values()) + 1
    config["post_processor"] = json.loads(processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(
            single="<|begin_of_text|> $A",
            special_tokens=[("<|begin_of_text|>", bos)])]).__getstate__())
    return config


def train_llama2(corpus, vocab_size=1200):
    """Trains on ▁-split words, then lays the vocabulary out as LLaMA 2
    does: <unk>, <s>, </s>, the 256 byte tokens, then the pieces."""
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="always")
    trained = train(tok, trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=["<unk>", "<s>", "</s>"],
        limit_alphabet=120, show_progress=False), corpus)
    specials = ["<unk>", "<s>", "</s>"]
    vocab = {name: i for i, name in enumerate(specials)}
    for byte in range(256):
        vocab["<0x%02X>" % byte] = len(vocab)
    for token, _ in sorted(trained["model"]["vocab"].items(),
                           key=lambda item: item[1]):
        if token not in vocab:
            vocab[token] = len(vocab)
    model = trained["model"]
    model.update(vocab=vocab, byte_fallback=True, fuse_unk=True)
    config = json.loads(Tokenizer(models.BPE()).to_str())
    config["model"] = model
    config["added_tokens"] = [
        {"id": i, "content": name, "single_word": False, "lstrip": False,
         "rstrip": False, "normalized": False, "special": True}
        for i, name in enumerate(specials)]
    config["normalizer"] = json.loads(normalizers.Sequence([
        normalizers.Prepend("▁"),
        normalizers.Replace(" ", "▁")]).__getstate__())
    config["pre_tokenizer"] = None
    config["decoder"] = json.loads(decoders.Sequence([
        decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
        decoders.Strip(" ", 1, 0)]).__getstate__())
    config["post_processor"] = json.loads(processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", 1)]).__getstate__())
    return config


def added(content, token_id, special=False, normalized=None, **flags):
    entry = {"id": token_id, "content": content, "single_word": False,
             "lstrip": False, "rstrip": False,
             "normalized": (not special) if normalized is None else normalized,
             "special": special}
    entry.update(flags)
    return entry


def variants(bases):
    """(name, base name, config) of every case."""
    out = [(name, None, config) for name, config in bases.items()]

    def derive(name, base, edit, against=None):
        """`against`: the case it must differ from (default: its base)."""
        config = copy.deepcopy(bases[base])
        edit(config)
        out.append((name, against or base, config))

    def prefix_space(c):
        c["pre_tokenizer"]["add_prefix_space"] = True
    derive("gpt2-prefix-space", "gpt2", prefix_space)

    def gpt2_added(c):
        n = len(c["model"]["vocab"])
        c["added_tokens"] += [
            added("hello world", n, normalized=False),
            added("<tab>", n + 1, lstrip=True, rstrip=True),
            added("mask", n + 2, single_word=True),
            added("<Ġx>", n + 3, special=True),
        ]
    derive("gpt2-added-tokens", "gpt2", gpt2_added)

    def string_merges(c):
        c["model"]["merges"] = [" ".join(m) for m in c["model"]["merges"]]
        # The order of merges is their rank: reverse a few to see it used.
        m = c["model"]["merges"]
        m[40:80] = reversed(m[40:80])
    derive("gpt2-string-merges", "gpt2", string_merges)

    def keep_merges(c):
        c["model"]["ignore_merges"] = False
    derive("llama3-no-ignore-merges", "llama3", keep_merges)

    def qwen2(c):
        c["normalizer"] = {"type": "NFC"}
        c["pre_tokenizer"]["pretokenizers"][0]["pattern"] = {
            "Regex": QWEN2_PATTERN}
    derive("qwen2-nfc", "llama3", qwen2)

    for form in ["NFD", "NFKC", "NFKD"]:
        derive("llama3-" + form.lower(), "llama3",
               lambda c, form=form: c.__setitem__("normalizer",
                                                  {"type": form}))

    derive("llama3-isolated-punctuation", "llama3",
           lambda c: c["pre_tokenizer"]["pretokenizers"][0].update(
               pattern={"Regex": r"\s+|\p{P}+"}))
    for behavior in ["Removed", "MergedWithPrevious", "MergedWithNext",
                     "Contiguous"]:
        for invert in [False, True]:
            # LLaMA 3's pattern matches every character, which leaves the
            # behaviours nothing to tell apart: spaces and punctuation.
            def split(c, behavior=behavior, invert=invert):
                step = c["pre_tokenizer"]["pretokenizers"][0]
                step.update(pattern={"Regex": r"\s+|\p{P}+"},
                            behavior=behavior, invert=invert)
            derive("llama3-%s%s" % (behavior.lower(),
                                    "-invert" if invert else ""),
                   "llama3", split, against="llama3-isolated-punctuation")

    def split_string(c):
        c["pre_tokenizer"]["pretokenizers"].insert(0, {
            "type": "Split", "pattern": {"String": "e"},
            "behavior": "MergedWithNext", "invert": False})
    derive("llama3-string-split", "llama3", split_string)

    def no_fallback(c):
        c["model"]["byte_fallback"] = False
    derive("llama2-unk-fused", "llama2", no_fallback)

    def partial_bytes(c):
        # Without <0xF0> four-byte characters (emoji) cannot fall back to
        # bytes and become <unk>; without <0x09>, tabs do.
        for byte in ["<0xF0>", "<0x09>"]:
            del c["model"]["vocab"][byte]
    derive("llama2-partial-bytes", "llama2", partial_bytes)

    def no_fuse(c):
        c["model"].update(byte_fallback=False, fuse_unk=False)
    derive("llama2-unk", "llama2", no_fuse)

    def metaspace(scheme, split):
        def edit(c):
            c["normalizer"] = None
            c["pre_tokenizer"] = {"type": "Metaspace", "replacement": "▁",
                                  "prepend_scheme": scheme, "split": split}
        return edit
    derive("llama2-metaspace-first", "llama2", metaspace("first", False))
    derive("llama2-metaspace-always-split", "llama2",
           metaspace("always", True))
    derive("llama2-metaspace-never", "llama2", metaspace("never", False))

    def metaspace_decoder(c):
        metaspace("first", False)(c)
        c["decoder"] = {"type": "Sequence", "decoders": [
            {"type": "Metaspace", "replacement": "▁",
             "prepend_scheme": "first", "split": False},
            {"type": "ByteFallback"}, {"type": "Fuse"}]}
    derive("llama2-metaspace-decoder", "llama2", metaspace_decoder)

    def legacy_metaspace(c):
        c["normalizer"] = None
        c["pre_tokenizer"] = {"type": "Metaspace", "replacement": "▁",
                              "add_prefix_space": True}
    derive("llama2-legacy-metaspace", "llama2", legacy_metaspace)

    def normalized_added(c):
        n = len(c["model"]["vocab"])
        c["added_tokens"] += [
            added("hello", n), added("world", n + 1, rstrip=True),
            added("<mask>", n + 2, special=True, normalized=True)]
    derive("llama2-normalized-added", "llama2", normalized_added)
    return out


def package_side(path, texts, decode_seed):
    tok = Tokenizer.from_file(path)
    encoded = [tok.encode(t, add_special_tokens=False).ids for t in texts]
    special = [tok.encode(t).ids for t in texts]
    rng = random.Random(decode_seed)
    size = tok.get_vocab_size()
    decode = encoded + special + [
        [rng.randrange(-3, size + 3) for _ in range(rng.randint(0, 30))]
        for _ in range(100)]
    # Ids outside the vocabulary are skipped; negative ones cannot reach the
    # package (its ids are unsigned), so they go to llmc only.
    unsigned = [[i for i in ids if i >= 0] for ids in decode]
    return {
        "encode": encoded, "encode_special": special,
        "decode_ids": decode,
        "decode": [tok.decode(ids, skip_special_tokens=False)
                   for ids in unsigned],
        "decode_skip": [tok.decode(ids) for ids in unsigned],
    }


def run_probe(probe, path, texts, decode_ids, workdir, name):
    requests = os.path.join(workdir, name + ".requests.json")
    with open(requests, "w", encoding="utf-8") as f:
        json.dump({"encode": texts, "decode": decode_ids}, f)
    result = subprocess.run([probe, path, requests], capture_output=True,
                            text=True, encoding="utf-8")
    try:
        answer = json.loads(result.stdout)
    except json.JSONDecodeError:
        sys.exit("%s: llmc-tokenizer-probe printed no JSON (exit %d): %s" %
                 (name, result.returncode, result.stderr[-2000:]))
    if "error" in answer:
        sys.exit("%s: llmc refused the tokenizer or a text: %s" %
                 (name, answer["error"]))
    return answer


def first_difference(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def compare(name, path, texts, ours, theirs):
    tok = Tokenizer.from_file(path)
    failures = 0
    for key in ["encode", "encode_special"]:
        for text, mine, want in zip(texts, ours[key], theirs[key]):
            if mine != want:
                failures += 1
                at = first_difference(mine, want)
                print("FAIL %s %s %r\n  at id %d: llmc %s\n  package %s" % (
                    name, key, text[:200], at,
                    [tok.id_to_token(i) for i in mine[at:at + 8]],
                    [tok.id_to_token(i) for i in want[at:at + 8]]))
    for key in ["decode", "decode_skip"]:
        for ids, mine, want in zip(theirs["decode_ids"], ours[key],
                                   theirs[key]):
            if mine != want:
                failures += 1
                print("FAIL %s %s %s\n  llmc    %r\n  package %r" % (
                    name, key, ids[:40], mine[:200], want[:200]))
    # llmc's vocabSize() is the largest id + 1 (what a shard reader checks
    # ids against); the package's get_vocab_size() counts entries, which
    # differs for a vocabulary with holes.
    largest = max(tok.get_vocab(with_added_tokens=True).values()) + 1
    if ours["vocab_size"] != largest:
        failures += 1
        print("FAIL %s vocab_size: llmc %d, package's largest id + 1 %d" %
              (name, ours["vocab_size"], largest))
    return failures


def check_coverage(results, bases_of):
    """The texts reach what the test claims to test."""
    problems = []

    def ids_of(name):
        return [i for ids in results[name]["encode"] for i in ids]

    def token_ids(name, config, contents):
        return {config["model"]["vocab"].get(c) for c in contents} | {
            t["id"] for t in config["added_tokens"] if t["content"] in contents}

    configs = results["configs"]
    if not any(3 <= i <= 258 for i in ids_of("llama2")):
        problems.append("llama2: no <0xNN> byte-fallback token was used")
    if 0 not in ids_of("llama2-unk-fused"):
        problems.append("llama2-unk-fused: no <unk> was produced")
    for name, contents in [("gpt2-added-tokens", ["hello world", "<tab>",
                                                  "mask", "<Ġx>"]),
                           ("gpt2", ["<|endoftext|>"]),
                           ("llama2", ["<s>", "</s>"])]:
        for content in contents:
            wanted = token_ids(name, configs[name], [content]) - {None}
            if not wanted & set(ids_of(name)):
                problems.append("%s: %r never matched" % (name, content))
    if not any("\ufffd" in text for text in results["gpt2"]["decode"]):
        problems.append("gpt2: no decoded text had invalid UTF-8")
    for name, base in bases_of.items():
        if base and results[name]["encode"] == results[base]["encode"] and \
                results[name]["decode"] == results[base]["decode"]:
            problems.append("%s: encodes and decodes every text as %s does,"
                            " so it tests nothing" % (name, base))
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probe", required=True,
                        help="path of llmc-tokenizer-probe")
    parser.add_argument("--docs", required=True, help="the docs/ folder")
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--seed", type=int, default=22)
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    started = time.time()

    files = sorted(glob.glob(os.path.join(args.docs, "*.md")))
    if len(files) < 4:
        sys.exit("expected the project's docs/*.md in " + args.docs)
    held_out_doc = files[len(files) // 2]
    corpus = [open(f, encoding="utf-8").read() for f in files
              if f != held_out_doc]
    # Its first 16,000 characters, cut at a line end: the package encodes
    # about 1 MB/s, and the whole doc (84 KB) cost two thirds of the run.
    held_out_text = open(held_out_doc, encoding="utf-8").read()
    if len(held_out_text) > HELD_OUT_DOC_CHARS:
        held_out_text = held_out_text[:held_out_text.rindex(
            "\n", 0, HELD_OUT_DOC_CHARS) + 1]
    texts = HELD_OUT + [held_out_text] + random_texts(args.seed, 60)

    bases = {"gpt2": train_gpt2(corpus), "llama3": train_llama3(corpus),
             "llama2": train_llama2(corpus)}
    results = {"configs": {}}
    bases_of = {}
    failures = 0
    for name, base, config in variants(bases):
        path = os.path.join(args.workdir, name + ".json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(config, f, ensure_ascii=False)
        theirs = package_side(path, texts, args.seed)
        ours = run_probe(args.probe, path, texts, theirs["decode_ids"],
                         args.workdir, name)
        count = compare(name, path, texts, ours, theirs)
        failures += count
        results[name] = theirs
        results["configs"][name] = config
        bases_of[name] = base
        tokens = sum(len(ids) for ids in theirs["encode"])
        print("%-34s %s (%d texts, %d tokens, %d decodes)" % (
            name, "ok" if not count else "%d FAILURES" % count, len(texts),
            tokens, len(theirs["decode_ids"])))
    problems = check_coverage(results, bases_of)
    for problem in problems:
        print("COVERAGE " + problem)
    print("%d tokenizers in %.1f s" % (len(bases_of), time.time() - started))
    if failures or problems:
        sys.exit("tokenizer parity failed: %d mismatches, %d coverage "
                 "problems" % (failures, len(problems)))


if __name__ == "__main__":
    main()
