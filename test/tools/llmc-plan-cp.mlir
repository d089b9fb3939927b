// llmc plan on a context-parallel mesh: ring attention's shifts are counted
// per mesh axis, each sending its whole payload once (a point-to-point
// rotation), beside the all-reduce that finishes the sums over tokens; its
// blocks are flash kernels (attention_block, attention_block_grad) counted
// as attention, and the peak per rank falls with cp.

// RUN: printf '[model]\nfamily = "llama"\nvocab_size = 256\nlayers = 2\nwidth = 64\nheads = 8\nkv_heads = 4\nffn_width = 176\n[train]\nbatch_size = 2\nseq_len = 16\n[parallel]\ndevices = "cpu"\ncp = 2\n' > %t.cp2.toml
// RUN: llmc plan %t.cp2.toml | FileCheck %s --check-prefix=CP2
// CP2:      on each of 2 ranks of mesh {cp=2}:
// Per layer: K, V and key positions once forward; K, V, positions and the
// partial dK, dV once backward, and dK, dV home: 10 shifts, 20 for 2 layers.
// CP2:        axes    kind               ops     payload bytes        sent bytes
// CP2-NEXT:   cp      all-reduce           1
// CP2-NEXT:   cp      shift               20
// CP2-NOT:    all-gather
// CP2-NOT:    reduce-scatter

// A shift sends its payload: awk checks every shift row.
// RUN: llmc plan %t.cp2.toml | tr -d , | awk '$2 == "shift" { n++; if ($5 != $4) bad++ } END { print n " rows, " bad+0 " wrong" }' | FileCheck %s --check-prefix=FORMS
// FORMS: 1 rows, 0 wrong

// cp = 4: three ring steps each way, plus the way home: 3·3 + 5·3 + 2 = 26
// shifts per layer.
// RUN: sed 's/cp = 2/cp = 4/' %t.cp2.toml > %t.cp4.toml
// RUN: llmc plan %t.cp4.toml | FileCheck %s --check-prefix=CP4
// CP4:        cp      shift               52

// The blocks by op: 2 layers x 2 ring steps of each. A block counts half
// its scores (the zigzag split makes every block half visible): per block
// B Hq (T/2) (T/2) = 2·8·8·8 scores, times 4D + 5 = 37 forward (18,944
// flops) and 10D + 8 = 88 backward (45,056), four of each. No dense
// select-masked score block is left.
// RUN: llmc plan %t.cp2.toml --by-op | FileCheck %s --check-prefix=OPS
// OPS:        attention              8
// OPS-NOT:    {{^ *}}select
// OPS:        attention_block_grad   4    4    1.80e+05
// OPS-NEXT:   attention_block        4    4    7.58e+04
// OPS-NOT:    {{^ *}}select

// The peak per rank falls with cp (LLaMA tiny at T = 256, B = 4, the
// context-parallel-parity model; docs/sharding.md has the figures).
// RUN: printf '[model]\nfamily = "llama"\nvocab_size = 256\nlayers = 2\nwidth = 64\nheads = 8\nkv_heads = 4\nffn_width = 176\n[train]\nbatch_size = 4\nseq_len = 256\n[parallel]\ndevices = "cpu"\ncp = 1\n' > %t.long1.toml
// RUN: sed 's/cp = 1/cp = 2/' %t.long1.toml > %t.long2.toml
// RUN: sed 's/cp = 1/cp = 4/' %t.long1.toml > %t.long4.toml
// RUN: llmc plan %t.long1.toml | tr -d , | awk '/peak \(live\)/ { print $3 }' > %t.peaks
// RUN: llmc plan %t.long2.toml | tr -d , | awk '/peak \(live\)/ { print $3 }' >> %t.peaks
// RUN: llmc plan %t.long4.toml | tr -d , | awk '/peak \(live\)/ { print $3 }' >> %t.peaks
// RUN: awk 'NR > 1 && $1 >= last { bad++ } { last = $1 } END { print NR " peaks, " bad+0 " rising" }' %t.peaks | FileCheck %s --check-prefix=PEAK
// PEAK: 3 peaks, 0 rising
