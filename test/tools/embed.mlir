// The deployment path: compile on one machine, run with the runtime alone.
// llmc-embed-example links only libllmc_runtime and uses the public C/C++
// API; it checks that the loss of near-zero weights is ln(vocabulary).

// RUN: llmc compile %llmc_src_root/examples/gpt2-tiny.toml --forward -o %t.llmcx 2>&1 | FileCheck %s --check-prefix=COMPILE
// COMPILE: wrote {{.*}}.llmcx: @loss, 30 arguments, 1 outputs, {{[0-9]+}} commands, {{[0-9]+}} bytes of buffers

// RUN: llmc-embed-example %t.llmcx | FileCheck %s
// CHECK: llmc runtime 0.1.0
// CHECK: bound 30 arguments
// CHECK: loss = {{[0-9]+\.[0-9]+}}
// CHECK: ln(vocabulary 128) = 4.852030

// The artifact's tables, read back with the runtime's reader.
// RUN: llmc inspect %t.llmcx | FileCheck %s --check-prefix=INSPECT
// INSPECT: executable {{.*}}.llmcx (format 5, by llmc 0.1.0, from {{.*}}gpt2-tiny.toml): @loss
// INSPECT-NEXT: parameter transformer.wte.weight {{ *}}f32[128, 64]
// INSPECT: input {{ *}}tokens {{ *}}i32[2, 16]
// INSPECT: output {{ *}}loss {{ *}}f32[]
// INSPECT-NEXT: 1 rank(s); rank 0: {{[0-9]+}} commands

// A damaged file is refused with the reason.
// RUN: head -c 100 %t.llmcx > %t.short.llmcx
// RUN: not llmc-embed-example %t.short.llmcx 2>&1 | FileCheck %s --check-prefix=SHORT
// SHORT: llmc-embed-example: load: {{.*}}short.llmcx: expected {{[0-9]+}} bytes after the header, found 68; the file is truncated or damaged: compile it again
