// Virtual ranks on a machine without a GPU (docs/distributed.md, "Virtual
// ranks on one GPU"): `llmc-run --virtual-ranks` and `llmc verify --device
// cuda` fail saying why (exit 1) and never fall back to the CPU; the flags
// that contradict them are usage errors (exit 2). On a GPU machine
// cuda-virtual-rank-tests runs the virtual ranks themselves.
// UNSUPPORTED: cuda

// RUN: rm -rf %t && mkdir -p %t
// RUN: printf '[model]\nfamily = "gpt2"\nvocab_size = 128\nlayers = 2\nwidth = 64\nheads = 4\nmax_positions = 32\n[train]\nbatch_size = 2\nseq_len = 16\nsteps = 4\n[parallel]\ndevices = "cpu"\ndp = 2\n' > %t/dp2.toml
// RUN: llmc compile %t/dp2.toml -o %t/dp2.llmcx

// RUN: sh -c 'llmc-run %t/dp2.llmcx --virtual-ranks --steps 1; echo "exit $?"' 2>&1 | FileCheck %s --check-prefix=NOGPU
// NOGPU:      llmc-run: {{devices = "cuda": no CUDA device on this machine \(cudaGetDeviceCount found none\); train with --device cpu or --device auto|--virtual-ranks needs the CUDA backend}}
// NOGPU-NEXT: exit 1

// RUN: sh -c 'llmc-run %t/dp2.llmcx --virtual-ranks --device cpu; echo "exit $?"' 2>&1 | FileCheck %s --check-prefix=CPU
// CPU:      llmc-run: --virtual-ranks runs every rank on one GPU in this process; it does not go with --device cpu
// CPU-NEXT: exit 2
// RUN: sh -c 'llmc-run %t/dp2.llmcx --virtual-ranks --nccl; echo "exit $?"' 2>&1 | FileCheck %s --check-prefix=WITHNCCL
// WITHNCCL:      llmc-run: --virtual-ranks runs every rank on one GPU in this process; it does not go with --nccl (one rank per process)
// WITHNCCL-NEXT: exit 2
// RUN: sh -c 'RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29999 llmc-run %t/dp2.llmcx --virtual-ranks; echo "exit $?"' 2>&1 | FileCheck %s --check-prefix=LAUNCHED
// LAUNCHED:      llmc-run: rank 1: --virtual-ranks runs every rank in one process; under a launcher (WORLD_SIZE=2) each process runs its own rank through NCCL: drop one or the other
// LAUNCHED-NEXT: exit 2
// RUN: sh -c 'llmc-run %t/dp2.llmcx --virtual-ranks --inputs %t/none.safetensors; echo "exit $?"' 2>&1 | FileCheck %s --check-prefix=ONCE
// ONCE:      llmc-run: --virtual-ranks trains a training artifact on the GPU; running a program once is CPU-only (its ranks run as CPU virtual devices)
// ONCE-NEXT: exit 2

// The help says what it does.
// RUN: llmc-run --help | FileCheck %s --check-prefix=HELP
// HELP: --virtual-ranks        run every rank of the artifact's mesh in this

// RUN: sh -c 'llmc verify %t/dp2.toml --device cuda; echo "exit $?"' 2>&1 | FileCheck %s --check-prefix=VERIFY
// VERIFY:      llmc verify: --device cuda: {{no CUDA device on this machine \(cudaGetDeviceCount found none\); verify on the CPU without --device|this build has no CUDA backend}}
// VERIFY-NEXT: exit 1
// RUN: sh -c 'llmc verify %t/dp2.toml --device tpu; echo "exit $?"' 2>&1 | FileCheck %s --check-prefix=BADDEVICE
// BADDEVICE:      llmc verify: --device expects cpu or cuda, got 'tpu'
// BADDEVICE-NEXT: exit 2

// llmc train --virtual-ranks: the same refusals as llmc-run's.
// RUN: sh -c 'llmc train %t/dp2.toml --virtual-ranks --device cpu; echo "exit $?"' 2>&1 | FileCheck %s --check-prefix=TRAINCPU
// TRAINCPU:      llmc train: --virtual-ranks runs every rank on one GPU in this process; it does not go with --device cpu
// TRAINCPU-NEXT: exit 2
// RUN: sh -c 'llmc train %t/dp2.toml --virtual-ranks --steps 1; echo "exit $?"' 2>&1 | FileCheck %s --check-prefix=TRAINNOGPU
// TRAINNOGPU:      llmc train: {{.*(no CUDA device on this machine|--virtual-ranks needs the CUDA backend).*}}
// TRAINNOGPU-NEXT: exit 1
// RUN: llmc train --help | FileCheck %s --check-prefix=TRAINHELP
// TRAINHELP: --virtual-ranks
