// Reliability (issue #27): what the tools refuse or write through instead of
// destroying a file, losing a run or accepting wrong input; every message in
// full. Each case failed before its fix (docs/testing.md, "Reliability").
// RUN: rm -rf %t && mkdir -p %t && cp %S/Inputs/train-tiny.toml %t/run.toml
// RUN: llmc compile %t/run.toml -o %t/a.llmcx > /dev/null

// An output that is one of the inputs is refused (exit 2), naming both.
// RUN: not llmc compile %t/run.toml -o %t/run.toml 2>&1 | FileCheck %s --check-prefix=SELF -DT=%t
// SELF: llmc compile: -o '[[T]]/run.toml' is the same file as the input '[[T]]/run.toml': writing it would destroy that input; give -o another path
// RUN: llmc compile %t/run.toml -o %t/run.toml 2> /dev/null; test $? -eq 2
// RUN: not llmc train %t/run.toml --metrics %t/./run.toml 2>&1 | FileCheck %s --check-prefix=METRICSELF -DT=%t
// METRICSELF: llmc train: --metrics '[[T]]/./run.toml' is the same file as the input '[[T]]/run.toml': writing it would destroy that input; give --metrics another path
// RUN: cmp %t/run.toml %S/Inputs/train-tiny.toml
// RUN: not llmc-run %t/a.llmcx --weights %t/w.safetensors --save-outputs %t/w.safetensors 2>&1 | FileCheck %s --check-prefix=SAVESELF -DT=%t
// SAVESELF: llmc-run: --save-outputs '[[T]]/w.safetensors' is the same file as --weights '[[T]]/w.safetensors': writing it would destroy that input; give --save-outputs another path

// A symbolic link is written through and kept.
// RUN: ln -s b.llmcx %t/link.llmcx
// RUN: llmc compile %t/run.toml -o %t/link.llmcx > /dev/null
// RUN: test -L %t/link.llmcx && test -f %t/b.llmcx && ! test -L %t/b.llmcx

// A directory where a file is expected: a message, not an abort.
// RUN: not llmc-run %t 2>&1 | FileCheck %s --check-prefix=RUNDIR -DT=%t
// RUNDIR: llmc-run: [[T]]: is not a regular file (a directory or a device); give the path of a file
// RUN: mkdir %t/d.llmcx && not llmc inspect %t/d.llmcx 2>&1 | FileCheck %s --check-prefix=INSPECTDIR -DT=%t
// INSPECTDIR: [[T]]/d.llmcx: error: [[T]]/d.llmcx: is not a regular file (a directory or a device); give the path of a file

// Every number of the command line in its range: exit 2 with the range.
// RUN: not llmc train %t/run.toml --threads 100000 2>&1 | FileCheck %s --check-prefix=THREADS
// THREADS: llmc train: --threads expects 0 to 1024 (0: every core), got 100000
// RUN: llmc train %t/run.toml --threads 100000 2> /dev/null; test $? -eq 2
// RUN: not llmc-run %t/a.llmcx --threads 100000 2>&1 | FileCheck %s --check-prefix=RUNTHREADS
// RUNTHREADS: llmc-run: --threads expects 0 (every core) to 1024, got 100000
// RUN: not llmc train %t/run.toml --steps -1 2>&1 | FileCheck %s --check-prefix=STEPS
// STEPS: llmc train: --steps expects 1 to 1099511627776, got -1
// RUN: not llmc train %t/run.toml --steps 0 2>&1 | FileCheck %s --check-prefix=STEPS0
// STEPS0: llmc train: --steps expects 1 to 1099511627776, got 0
// RUN: not llmc-run %t/a.llmcx --steps 0 2>&1 | FileCheck %s --check-prefix=RUNSTEPS0
// RUNSTEPS0: llmc-run: --steps expects 1 to 1099511627776 (the step to stop after), got 0
// RUN: not llmc-run %t/a.llmcx --steps -1 2>&1 | FileCheck %s --check-prefix=RUNSTEPS
// RUNSTEPS: llmc-run: --steps expects 1 to 1099511627776 (the step to stop after), got '-1'
// RUN: not llmc plan %t/run.toml --gpus 0 2>&1 | FileCheck %s --check-prefix=GPUS
// GPUS: llmc plan: --gpus expects 1 to 1048576, got 0
// RUN: llmc plan %t/run.toml --gpus 0 2> /dev/null; test $? -eq 2

// --seq-len past max_positions (16) would train on position rows that do
// not exist.
// RUN: not llmc compile %t/run.toml --seq-len 64 -o %t/s.llmcx 2>&1 | FileCheck %s --check-prefix=SEQLEN -DT=%t
// SEQLEN: [[T]]/run.toml: error: expected --seq-len <= max_positions 16 for gpt2, got 64; pass a smaller --seq-len or raise [model] max_positions (gpt2 learns one embedding per position)

// Metrics to a full disk: the error, exit 1, not lost lines with exit 0.
// RUN: not llmc-run %t/a.llmcx --steps 1 --metrics /dev/full 2>&1 | FileCheck %s --check-prefix=FULL
// FULL: llmc-run: cannot write the metrics file '/dev/full': No space left on device; free space or pass another --metrics path

// Checkpoints. An unwritable dir is found before step 1.
// RUN: not llmc-run %t/a.llmcx --checkpoint-dir /proc/llmc-none/ck 2>&1 | FileCheck %s --check-prefix=PROBE
// PROBE-NOT: step 1/
// PROBE: llmc-run: cannot create the checkpoint directory '/proc/llmc-none/ck': {{.+}}; choose another --checkpoint-dir
// RUN: llmc-run %t/a.llmcx --steps 2 --checkpoint-dir %t/ck > /dev/null
// A fresh run into a dir that holds a run is refused.
// RUN: not llmc-run %t/a.llmcx --steps 1 --checkpoint-dir %t/ck 2>&1 | FileCheck %s --check-prefix=FRESH -DT=%t
// FRESH: llmc-run: the checkpoint directory '[[T]]/ck' already holds a run (its latest is step-00000002): --resume it or choose another dir
// A second run while the first holds the lock (flock(1) holds it here).
// RUN: not flock %t/ck/.lock llmc-run %t/a.llmcx --resume %t/ck 2>&1 | FileCheck %s --check-prefix=LOCK -DT=%t
// LOCK: llmc-run: the checkpoint directory '[[T]]/ck' is in use by another run (pid {{[0-9]+}} holds [[T]]/ck/.lock); wait for it to end or choose another --checkpoint-dir
// --resume with --weights: the checkpoint's parameters would silently win.
// RUN: not llmc-run %t/a.llmcx --resume %t/ck --weights %t/w.safetensors 2>&1 | FileCheck %s --check-prefix=RESWEIGHTS -DT=%t
// RESWEIGHTS: llmc-run: --resume [[T]]/ck and --weights [[T]]/w.safetensors both give the starting parameters, and a checkpoint holds its own: drop --weights to resume, or --resume to start a new run from the weights
// A resumed run saves into the dir it resumed from; its metrics file, a
// device here, is rewritten through (it stays /dev/null).
// RUN: llmc-run %t/a.llmcx --resume %t/ck --steps 3 --metrics /dev/null | FileCheck %s --check-prefix=RESDIR -DT=%t
// RESDIR: saved checkpoint [[T]]/ck/step-00000003
// RUN: test -c /dev/null
// The model file with its integrity metadata loads in the safetensors
// package as it is.
// RUN: %llmc_src_root/.venv/bin/python -c "from safetensors import safe_open; f = safe_open('%t/ck/step-00000003/model.safetensors', 'np'); print(sorted(f.metadata().items())[:1], sorted(f.metadata())[1:], len(list(f.keys())))" | FileCheck %s --check-prefix=PY
// PY: [('format', 'pt')] ['llmc.lineage', 'llmc.model.xxh64', 'llmc.optimizer.xxh64', 'llmc.step'] {{[0-9]+}}
// A flipped bit in the checkpoint: refused on resume.
// RUN: cp -r %t/ck %t/flip && %llmc_src_root/.venv/bin/python -c "p = '%t/flip/step-00000003/model.safetensors'; b = bytearray(open(p, 'rb').read()); b[-1] ^= 1; open(p, 'wb').write(b)"
// RUN: not llmc-run %t/a.llmcx --resume %t/flip 2>&1 | FileCheck %s --check-prefix=FLIP -DT=%t
// FLIP: llmc-run: [[T]]/flip/step-00000003/model.safetensors: the tensors hash to xxh64 {{[0-9a-f]+}}, the checkpoint recorded {{[0-9a-f]+}}: the file is damaged (a flipped bit, a partial copy); resume from another checkpoint

// An artifact's data paths: relative to the run description, stored
// absolute, so that llmc-run finds them from any directory (they were
// relative to the directory llmc compile ran in).
// RUN: mkdir -p %t/rel && python3 %S/Inputs/make_shards.py %S/../../docs/training.md %t/rel/shards
// RUN: sed -e "s|@DIR@|shards|" -e "s|@STEPS@|4|" -e "s|@SHUFFLE@|false|" %S/Inputs/train-shards.toml > %t/rel/run.toml
// RUN: cd %t && llmc compile rel/run.toml -o %t/rel.llmcx > /dev/null
// RUN: cd / && llmc-run %t/rel.llmcx --steps 1 | FileCheck %s --check-prefix=RELDATA -DT=%t
// RELDATA: data [[T]]/rel/shards/train_*.bin: 3 files, 450 tokens (uint16), on cpu

// Token ids outside the vocabulary (128) in --inputs read zero embedding
// rows and gave a plausible loss.
// RUN: %llmc_src_root/.venv/bin/python -c "import numpy as np; from safetensors.numpy import save_file; t = np.zeros((4, 16), np.int32); t[1, 3] = 200; save_file({'tokens': t, 'targets': np.zeros((4, 16), np.int32)}, '%t/bad-ids.safetensors')"
// RUN: not llmc-run %t/a.llmcx --inputs %t/bad-ids.safetensors --init-seed 1 2>&1 | FileCheck %s --check-prefix=IDS -DT=%t
// IDS: llmc-run: [[T]]/bad-ids.safetensors: tensor 'tokens' holds the id 200 at element 19, outside the model's vocabulary [0, 128); encode the inputs with the model's tokenizer

// llmc inspect of 3000 layers traced every layer (49 s, 10 GB): now two
// shallow traces, and the count is exact (4,672 outside the layers plus
// 12,704 per layer, as the 1-layer model's groups show).
// RUN: sed -e "s/layers = 1/layers = 3000/" %t/run.toml > %t/deep.toml
// RUN: llmc inspect %t/deep.toml | FileCheck %s --check-prefix=DEEP
// DEEP: transformer.wte 1 4,096
// DEEP: transformer.h.*.mlp.c_fc 6000 12,672,000
// DEEP: total 36004 38,116,672
// RUN: sed -e "s/layers = 1/layers = 3/" %t/run.toml > %t/three.toml
// RUN: llmc inspect %t/three.toml | FileCheck %s --check-prefix=THREE
// THREE: total 40 42,784
