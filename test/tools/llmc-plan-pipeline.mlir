// llmc plan on a pipeline (pp = 2, 4 microbatches, GPT-2 tiny with 4
// layers): the schedule, its bubble and each stage's own buffer plan.
// 1F1B must keep fewer microbatches' activations than GPipe.

// RUN: printf '[model]\nfamily = "gpt2"\nvocab_size = 128\nlayers = 4\nwidth = 64\nheads = 4\nmax_positions = 32\n[train]\nbatch_size = 8\nseq_len = 16\nmicrobatches = 4\n[parallel]\ndevices = "cpu"\npp = 2\npipeline_schedule = "gpipe"\n' > %t.gpipe.toml
// RUN: sed 's/gpipe/1f1b/' %t.gpipe.toml > %t.1f1b.toml
// RUN: sed 's/layers = 4/layers = 8/; s/"gpipe"/"interleaved"\nvirtual_stages = 2/' %t.gpipe.toml > %t.interleaved.toml
// RUN: llmc plan %t.gpipe.toml | FileCheck %s --check-prefix=GPIPE
// RUN: llmc plan %t.1f1b.toml | FileCheck %s --check-prefix=ONEF
// RUN: llmc plan %t.interleaved.toml | FileCheck %s --check-prefix=INTER

// GPIPE:      per rank, on each of 2 ranks of mesh {pp=2}:
// GPIPE-NEXT:   pipeline stage 0 (the largest arena of the stages):
// GPIPE:        pipeline: 2 stages, schedule gpipe, 1 model chunk(s) per stage, 4 microbatches; chunks start at layers 0, 2 of 4
// GPIPE-NEXT:   bubble fraction 0.2{{[0-9]+}}
// GPipe runs all four forwards before a backward: four microbatches'
// activations on each stage (activations*: the most bytes of activations
// kept for backward live at once, anywhere in the stage's program; each
// layer's attention keeps its [2, 4, 16] f32 log-sum-exp among them). The
// last stage also keeps each microbatch's loss lse (32 positions, 128
// bytes) for the loss gradient (llmc-share-loss-statistics).
// GPIPE:        stage    in flight    activations*     peak (live)           arena  bytes
// GPIPE-NEXT:   0                4       1,053,248
// GPIPE-NEXT:   1                4       1,184,768
// 229,376 bytes: per microbatch a [2, 16, 64] f32 activation forward, its
// gradient back, and the head's [128, 64] contribution to the tied
// embedding's gradient back, and once the summed [128, 64] gradient forward
// (the last stage runs the tied embedding's update too); the other 8 are
// two scalars (the global gradient norm's partial sum forward and its
// clipping factor back). No optimizer state moves: an update's ops that
// read only the moments (beta1 * m) run on the stage of the gradient, and
// the clipping factor's broadcast to a weight's shape, which CSE shares
// between the layers, is copied for each stage that reads it (it was 7
// weight-sized sends more, 198,656 bytes, before).
// GPIPE:        pp      send/recv           15           229,384

// 1F1B: stage 0 keeps 2 (pp - stage), stage 1 one: about half and a third
// of GPipe's activation bytes (the same bubble). On this tiny model the
// peak itself is the optimizer's, so stage 0's arena is GPipe's.
// ONEF:         pipeline: 2 stages, schedule 1f1b
// ONEF-NEXT:    bubble fraction 0.2{{[0-9]+}}
// ONEF:         stage    in flight    activations*
// ONEF-NEXT:    0                2         641,472
// ONEF-NEXT:    1                1         411,136

// Interleaved, 2 chunks of 2 layers per stage (8 layers): a smaller bubble.
// INTER:        pipeline: 2 stages, schedule interleaved, 2 model chunk(s) per stage, 4 microbatches; chunks start at layers 0, 2, 4, 6 of 8
// INTER-NEXT:   bubble fraction 0.1{{[0-9]+}}
