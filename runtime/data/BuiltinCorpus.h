//===- BuiltinCorpus.h - a training text that needs no download -*- C++ -*-===//
//
// `llmc train` with no arguments trains on this: about 200 KB of simple
// English-like stories generated from a small grammar (word lists and
// sentence templates written for llmc) by a seeded PRNG, so the text is the
// same, byte for byte, on every platform and needs no file or network. Its
// vocabulary is a few hundred words and its structure repetitive, so that a
// tiny byte-level model visibly learns it in a minute or two on a CPU. See
// docs/runtime.md, "Built-in corpus".
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_DATA_BUILTINCORPUS_H
#define LLMC_RUNTIME_DATA_BUILTINCORPUS_H

#include <string>

namespace llmc::rt {

/// The name TokenShard::path() reports for the built-in corpus.
constexpr const char *kBuiltinCorpusName = "<built-in corpus>";

/// The built-in corpus: printable ASCII (32..126) and '\n' only, so every
/// byte is a token below 128. Generated on the first call (a few
/// milliseconds), then shared; thread-safe.
const std::string &builtinCorpus();

} // namespace llmc::rt

#endif // LLMC_RUNTIME_DATA_BUILTINCORPUS_H
