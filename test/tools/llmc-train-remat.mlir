// Rematerialization changes memory, not results: 10 steps of the tiny GPT-2
// (f32, CPU) give bitwise the same losses, rates and gradient norms with
// remat none, selective and full (the metrics print 9 significant digits,
// which tell any two f32 values apart).
// DEFINE: %{strip} = sed -E 's/, "tokens_per_s".*//'

// RUN: rm -rf %t && mkdir -p %t
// RUN: sed 's/^steps = 8$/steps = 10/' %S/Inputs/train-tiny.toml > %t/none.toml
// RUN: cp %t/none.toml %t/selective.toml && printf '[memory]\nremat = "selective"\n' >> %t/selective.toml
// RUN: cp %t/none.toml %t/full.toml && printf '[memory]\nremat = "full"\n' >> %t/full.toml
// RUN: llmc train %t/none.toml --metrics %t/none.jsonl > /dev/null
// RUN: llmc train %t/selective.toml --metrics %t/selective.jsonl > /dev/null
// RUN: llmc train %t/full.toml --metrics %t/full.jsonl > /dev/null
// RUN: %{strip} < %t/none.jsonl > %t/none.txt
// RUN: %{strip} < %t/selective.jsonl > %t/selective.txt
// RUN: %{strip} < %t/full.jsonl > %t/full.txt
// RUN: FileCheck %s < %t/none.txt
// CHECK-COUNT-10: {"step": {{[0-9]+}}, "loss":
// RUN: diff %t/none.txt %t/selective.txt
// RUN: diff %t/none.txt %t/full.txt

// The programs differ: full recomputes the layer, selective less, and the
// peak memory falls accordingly.
// RUN: llmc plan %t/full.toml | FileCheck %s --check-prefix=FULL
// FULL: remat full: {{[1-9][0-9]*}} ops recomputed in backward, {{.*}} flops (full recomputation of 1 layers)
// RUN: llmc plan %t/selective.toml | FileCheck %s --check-prefix=SEL
// SEL: remat selective: {{[1-9][0-9]*}} ops recomputed in backward
