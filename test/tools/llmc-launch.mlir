// llmc launch on a machine without a GPU (docs/distributed.md): a world of
// one meets itself at the rendezvous and trains on the CPU, each line
// prefixed with its rank; a mesh of two ranks is refused by every process
// with the message that says where it can run; a failing child makes the
// launcher exit 1 naming its rank.
// UNSUPPORTED: cuda

// RUN: rm -rf %t && mkdir -p %t

// A world of one, through the launcher and the rendezvous, on the CPU.
// RUN: llmc launch -n 1 %S/Inputs/train-tiny.toml --steps 2 --device cpu -o %t/one.llmcx | FileCheck %s --check-prefix=ONE
// ONE:      [rank 0] training {{.*}}train-tiny.toml: steps 1-2 of 8, {{.*}}, on cpu
// ONE-NEXT: [rank 0] MFU: {{.*}} x 1 device
// ONE-NEXT: [rank 0] step 1/8  loss
// ONE-NEXT: [rank 0] step 2/8  loss
// RUN: test -f %t/one.llmcx

// Two ranks need two GPUs: every rank refuses before the rendezvous.
// RUN: sh -c 'llmc launch -n 2 %S/Inputs/train-tiny-dp2.toml --steps 1; echo "exit $?"' > %t/two.txt 2>&1
// RUN: FileCheck %s --check-prefix=TWO < %t/two.txt
// TWO: [rank {{[01]}}] llmc-run: rank {{[01]}}: multi-process runs need GPUs (NCCL); on the CPU use devices = "cpu" in one process, which runs every rank (llmc train RUN.toml, or llmc-run ARTIFACT without a launcher)
// TWO: llmc launch: rank {{[01]}} exited with status 1
// TWO: exit 1

// The process count must be the mesh's.
// RUN: not llmc launch -n 3 %S/Inputs/train-tiny-dp2.toml 2>&1 | FileCheck %s --check-prefix=COUNT
// COUNT: llmc launch: {{.*}}train-tiny-dp2.toml has a mesh of 2 rank(s) {dp=2}; launch it with -n 2 (one process per rank)
// RUN: not llmc launch %S/Inputs/train-tiny.toml 2>&1 | FileCheck %s --check-prefix=NOCOUNT
// NOCOUNT: llmc launch: -n N (the number of processes, one per GPU) is required and must be at least 1, got 0

// A child that fails: the launcher names it.
// RUN: not llmc launch -n 1 %S/Inputs/train-tiny.toml --data %t/missing.bin 2>&1 | FileCheck %s --check-prefix=FAIL
// FAIL: [rank 0] llmc-run: {{.*}}missing.bin
// FAIL: llmc launch: rank 0 exited with status 1

// llmc-run reads the launcher's variables itself; bad values are refused by
// name, and a multi-process world on the CPU is refused before anyone meets.
// RUN: llmc compile %S/Inputs/train-tiny-dp2.toml -o %t/dp2.llmcx
// RUN: not env RANK=x WORLD_SIZE=2 llmc-run %t/dp2.llmcx 2>&1 | FileCheck %s --check-prefix=BADRANK
// BADRANK: llmc-run: RANK='x' is not a non-negative integer
// RUN: not env RANK=2 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 llmc-run %t/dp2.llmcx 2>&1 | FileCheck %s --check-prefix=OUTSIDE
// OUTSIDE: llmc-run: RANK='2' is outside the world of 2 (WORLD_SIZE): ranks are 0..1
// RUN: not env RANK=0 WORLD_SIZE=2 MASTER_PORT=29500 llmc-run %t/dp2.llmcx 2>&1 | FileCheck %s --check-prefix=NOADDR
// NOADDR: llmc-run: MASTER_ADDR is not set; rank 0's host is needed for the rendezvous
// RUN: not env RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 llmc-run %t/dp2.llmcx 2>&1 | FileCheck %s --check-prefix=CPU
// CPU: llmc-run: rank 1: multi-process runs need GPUs (NCCL); on the CPU use devices = "cpu"
// RUN: not env RANK=0 WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 llmc-run %t/dp2.llmcx 2>&1 | FileCheck %s --check-prefix=WORLD
// WORLD: llmc-run: rank 0: the artifact's mesh {dp=2} has 2 ranks and the world 3 processes; launch it with -n 2

// On the CPU the same mesh runs all its ranks in one process, compiled
// without fused kernels: the artifact for devices = "cuda" gives elementwise
// regions' intermediates no storage, and the CPU refuses it
// (test/tools/llmc-fused-kernels.mlir).
// RUN: llmc compile %S/Inputs/train-tiny-dp2.toml --fused-kernels=false -o %t/dp2-cpu.llmcx
// RUN: llmc-run %t/dp2-cpu.llmcx --device cpu --steps 1 | FileCheck %s --check-prefix=ONEPROC
// ONEPROC: step 1/8

// llmc train under a launcher (torchrun --no-python llmc train) reads the
// same variables: a world of two on the CPU is refused the same way.
// RUN: not env RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 llmc train %S/Inputs/train-tiny-dp2.toml --steps 1 2>&1 | FileCheck %s --check-prefix=TRAIN
// TRAIN: llmc train: rank 0: multi-process runs need GPUs (NCCL); on the CPU use devices = "cpu"

// A launched process cannot run a program once.
// RUN: llmc compile %S/Inputs/train-tiny.toml --forward -o %t/forward.llmcx
// RUN: not env RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 llmc-run %t/forward.llmcx --init-seed 1 2>&1 | FileCheck %s --check-prefix=ONCE
// ONCE: llmc-run: rank 0: a multi-process run (or --nccl) trains a training artifact; running a program once is for one process
