// llmc plan on a context-parallel mesh: ring attention's shifts are counted
// per mesh axis, each sending its whole payload once (a point-to-point
// rotation), beside the all-reduce that finishes the sums over tokens.

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
