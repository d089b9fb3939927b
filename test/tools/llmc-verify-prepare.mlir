// llmc verify --device cuda --prepare DIR: the compiler's half of a GPU
// verify, for a GPU machine without the compiler. It compiles the four
// programs (the mesh and one device, each for the CPU devices and as the
// run compiles them for the GPU), draws the initial parameters and writes
// verify.json; `llmc-run verify DIR` trains and compares them there
// (docs/verify.md, "On a GPU machine without the compiler"). Without a GPU
// here, llmc-run refuses by name (on the H200: PASS, docs/verify.md).

// RUN: rm -rf %t && mkdir -p %t
// RUN: printf '[model]\nfamily = "gpt2"\nvocab_size = 128\nlayers = 4\nwidth = 64\nheads = 4\nmax_positions = 32\n[train]\nbatch_size = 8\nseq_len = 16\nsteps = 10\nlearning_rate = 1e-3\nwarmup_steps = 2\nmicrobatches = 4\n[parallel]\ndevices = "cuda"\npp = 2\n' > %t/pp2.toml
// RUN: llmc verify %t/pp2.toml --device cuda --prepare %t/dir --steps 4 | FileCheck %s --check-prefix=PREP
// PREP:      compiling the mesh program
// PREP-NEXT: compiling the single-device program
// PREP-NEXT: compiling both again as the run compiles them, for the GPU
// PREP-NEXT: wrote the programs, the initial parameters and verify.json to {{.*}}dir: copy it to the GPU machine and run `llmc-run verify {{.*}}dir` there
// PREP-NOT:  training

// RUN: ls %t/dir | FileCheck %s --check-prefix=FILES
// FILES:      initial.safetensors
// FILES-NEXT: mesh-cuda.llmcx
// FILES-NEXT: mesh.llmcx
// FILES-NEXT: single-cuda.llmcx
// FILES-NEXT: single.llmcx
// FILES-NEXT: verify.json
// RUN: FileCheck %s --check-prefix=JSON < %t/dir/verify.json
// JSON-DAG: "device": "cuda"
// JSON-DAG: "steps": 4
// JSON-DAG: "tolerance_scalar": 1e-05
// JSON-DAG: "tolerance_tensor": 0.0001
// The GPU programs are the mesh's two ranks; the CPU ones too.
// RUN: llmc inspect %t/dir/mesh-cuda.llmcx | FileCheck %s --check-prefix=MESH
// MESH: mesh {pp=2}

// Here (no GPU): refused by name, exit 1.
// RUN: not llmc-run verify %t/dir 2>&1 | FileCheck %s --check-prefix=NOGPU
// NOGPU: llmc verify: --device cuda: {{no CUDA device on this machine|this build has no CUDA backend}}

// Usage errors: --prepare is for --device cuda, and keeps everything in DIR.
// RUN: not llmc verify %t/pp2.toml --prepare %t/other 2>&1 | FileCheck %s --check-prefix=CPU
// CPU: llmc verify: --prepare writes the programs of --device cuda for a GPU machine; add --device cuda
// RUN: not llmc verify %t/pp2.toml --device cuda --prepare %t/other --keep %t/k 2>&1 | FileCheck %s --check-prefix=KEEP
// KEEP: llmc verify: --prepare DIR keeps everything in DIR; leave out --keep
// RUN: not llmc-run verify 2>&1 | FileCheck %s --check-prefix=NODIR
// NODIR: llmc-run verify: expected the DIR of `llmc verify RUN.toml --device cuda --prepare DIR`
// RUN: not llmc-run verify %t/missing 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: llmc verify: cannot read {{.*}}missing/verify.json: is this a directory of `llmc verify RUN.toml --device cuda --prepare DIR`?
