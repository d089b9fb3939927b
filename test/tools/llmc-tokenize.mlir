// `llmc tokenize`: its --help and the errors of its command line. The shards
// themselves are checked against the tokenizers package by
// test/text/tokenize_cli_test.py (ctest tokenize-cli).

// RUN: llmc --help | FileCheck %s --check-prefix=TOP
// TOP: tokenize - Encode text files with a Hugging Face tokenizer.json

// RUN: llmc tokenize --help | FileCheck %s --check-prefix=HELP
// HELP: USAGE: llmc tokenize [options] <FILE>...
// HELP-DAG: --eot
// HELP-DAG: --lines
// HELP-DAG: -o <DIR>
// HELP-DAG: --shard-tokens=<N>
// HELP-DAG: --threads=<N>
// HELP-DAG: --tokenizer=<T.json>
// HELP-DAG: --val-fraction=<F>
// HELP-NOT: --x86-

// RUN: not llmc tokenize %s -o %t.out 2>&1 | FileCheck %s --check-prefix=NOTOKENIZER
// NOTOKENIZER: llmc: for the --tokenizer option: must be specified at least once!

// RUN: not llmc tokenize --tokenizer %t.none.json %s -o %t.out 2>&1 | FileCheck %s --check-prefix=NOFILE -DFILE=%t.none.json
// NOFILE: llmc tokenize: error: [[FILE]]: cannot open: No such file or directory; check the path
