// Faults in the training loop (issue #27; docs/testing.md, "Fuzzing and
// sanitizers"): SIGKILL at 20 random moments (seeded) of a run that saves
// a checkpoint every step, resumed after each, gives the losses of a run
// never stopped; a disk that fills during a save leaves the previous
// checkpoint intact and loadable, and the run fails naming the file; on
// CPU virtual devices a rank that stops answering makes its peers' collective
// time out with a message naming the rank, the model part and the collective.

// RUN: rm -rf %t && mkdir -p %t
// RUN: llmc compile %S/Inputs/train-faults.toml -o %t/run.llmcx --quiet
// RUN: python3 %S/Inputs/faults.py --llmc-run llmc-run kill %t/run.llmcx %t/kill --kills 20 --seed 27 | FileCheck %s --check-prefix=KILL
// KILL:      20 kills, {{[0-9]+}} runs: the losses of steps 1-100 equal the uninterrupted run's
// KILL-NEXT: resumed from steps [{{[0-9, ]+}}]

// A tmpfs where this process can mount one, else RLIMIT_FSIZE; then the
// file-size limit alone, so that both ways run where the first is a tmpfs.
// RUN: python3 %S/Inputs/faults.py --llmc-run llmc-run full-disk %t/run.llmcx %t/disk | FileCheck %s --check-prefix=DISK
// RUN: python3 %S/Inputs/faults.py --llmc-run llmc-run full-disk %t/run.llmcx %t/fsize --no-mount | FileCheck %s --check-prefixes=DISK,FSIZE
// DISK:       disk:
// FSIZE-SAME: RLIMIT_FSIZE of 4096 bytes
// DISK-NEXT:  exit status 1
// DISK-NEXT:  llmc-run: {{.*}}/.step-00000002.partial/{{model|optimizer}}.safetensors.tmp: write failed: {{No space left on device|File too large}}; {{.*}} was left as it was
// DISK-NEXT:  latest: step-00000001, its files unchanged
// DISK-NEXT:  resumed from step 1: the losses of steps 1-100 equal the uninterrupted run's

// Rank 1 of a dp=2 program stops answering (the test hook of
// runtime/Session.h) at its first collective; rank 0 waits 1 s.
// RUN: llmc compile %S/Inputs/train-faults-dp2.toml -o %t/dp2.llmcx --quiet
// RUN: env LLMC_TEST_STALL_RANK=1 LLMC_COLLECTIVE_TIMEOUT_S=1 not llmc-run %t/dp2.llmcx --steps 1 --sample-tokens 0 2>&1 | FileCheck %s --check-prefix=STALL
// STALL: llmc-run: step 1: device 0: rank 0: at transformer.wpe (backward): all_reduce on group [0, 1] did not complete within 1 s: ranks [1] never arrived; a rank that stops answering (stuck, or failed) holds up its peers: LLMC_COLLECTIVE_TIMEOUT_S sets how long they wait (in seconds)
// RUN: env LLMC_COLLECTIVE_TIMEOUT_S=0 not llmc-run %t/dp2.llmcx --steps 1 --sample-tokens 0 2>&1 | FileCheck %s --check-prefix=BADTIMEOUT
// BADTIMEOUT: LLMC_COLLECTIVE_TIMEOUT_S='0' is not a whole number from 1 to 1000000
