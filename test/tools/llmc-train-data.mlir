// llmc train on token shards: [data] train as a glob of llm.c shards, a
// validation set and [eval], shuffled and consecutive orders, an exact
// resume across shard and epoch boundaries, a metrics file that holds each
// step once after resumes, a finished run, a clean stop on SIGINT/SIGTERM,
// and bad data found before the first step.
// DEFINE: %{strip} = sed -E 's/, "tokens_per_s": [^,]*, "ms_per_step": [^,]*, "cpu_ms_per_step": [^,}]*, "devices": [0-9]+, "tokens_per_s_per_device": [^,}]*(, "mfu": [^,}]*)?//'

// RUN: rm -rf %t && mkdir -p %t
// RUN: python3 %S/Inputs/make_shards.py %S/../../docs/training.md %t/shards
// RUN: sed -e "s|@DIR@|%t/shards|" -e "s|@STEPS@|12|" -e "s|@SHUFFLE@|true|" %S/Inputs/train-shards.toml > %t/shuffled.toml
// RUN: sed -e "s|@DIR@|%t/shards|" -e "s|@STEPS@|12|" -e "s|@SHUFFLE@|false|" %S/Inputs/train-shards.toml > %t/ordered.toml

// Shuffled: 3 shards of 150 tokens give 3 x 9 windows of 17 tokens, 6
// batches of 4 an epoch; validation every 4 steps and at the end.
// RUN: llmc train %t/shuffled.toml --metrics %t/full.jsonl --checkpoint-dir %t/full | FileCheck %s --check-prefix=TRAIN
// TRAIN:      training {{.*}}shuffled.toml: steps 1-12 of 12, 4 sequences x 16 tokens per step, data {{.*}}shards/train_*.bin: 3 files, 450 tokens (uint16), shuffled, on cpu
// TRAIN-NEXT: validation: {{.*}}shards/val_*.bin: 1 file, 200 tokens (uint16), 2 batches of 2 x 16 tokens every 4 steps and at the end
// TRAIN:      val   4/12  val loss {{[0-9.]+}}  (2 batches, {{[0-9.]+}} s)
// TRAIN:      val   8/12  val loss
// TRAIN:      val  12/12  val loss
// TRAIN-NEXT: step 12/12  loss
// RUN: FileCheck %s --check-prefix=METRICS < %t/full.jsonl
// METRICS:      {"step": 1, "loss": {{[0-9.]+}}, {{.*}}"cpu_ms_per_step": {{[0-9.]+}}, "devices": 1, "tokens_per_s_per_device": {{[0-9.]+}}, "mfu": {{[0-9.]+}}}
// METRICS:      {"step": 4, {{.*}}, "val_loss": {{[0-9.]+}}}
// METRICS:      {"step": 8, {{.*}}, "val_loss": {{[0-9.]+}}}
// METRICS:      {"step": 12, {{.*}}, "val_loss": {{[0-9.]+}}}
// RUN: grep -c val_loss %t/full.jsonl | FileCheck %s --check-prefix=THREE
// THREE: 3
// The validation loss of the last step is that of its checkpoint: llmc eval.
// RUN: llmc eval %t/shuffled.toml --resume %t/full | FileCheck %s --check-prefix=EVAL
// EVAL: val loss {{[0-9.]+}} at step 12 of {{.*}}full/step-00000012 (2 batches of 2 x 16 tokens of {{.*}}val_*.bin: 1 file, 200 tokens (uint16), {{[0-9.]+}} s)
// The same value as the run's, to the last digit (9 significant).
// RUN: grep '"step": 12,' %t/full.jsonl | sed -E 's/.*"val_loss": ([0-9.]+).*/\1/' > %t/val12.txt
// RUN: llmc eval %t/shuffled.toml --resume %t/full | sed -E 's/val loss ([0-9.]+) .*/\1/' | diff %t/val12.txt -

// Stopped at step 5, resumed to step 9 (into the directory it resumed
// from, by default), then a run that went on to step 11 but saved
// elsewhere, so that the metrics file holds two steps past the checkpoint;
// the last resume (from step 9) keeps each step once: the metrics of the
// uninterrupted run.
// RUN: llmc train %t/shuffled.toml --steps 5 --metrics %t/part.jsonl --checkpoint-dir %t/part > /dev/null
// RUN: llmc train %t/shuffled.toml --steps 9 --metrics %t/part.jsonl --resume %t/part | FileCheck %s --check-prefix=KEEPDIR
// KEEPDIR: saved checkpoint {{.*}}part/step-00000009
// RUN: llmc train %t/shuffled.toml --steps 11 --metrics %t/part.jsonl --resume %t/part --checkpoint-dir %t/elsewhere > /dev/null
// RUN: grep -c '"step": 1[01],' %t/part.jsonl | FileCheck %s --check-prefix=TWO
// TWO: 2
// RUN: llmc train %t/shuffled.toml --metrics %t/part.jsonl --resume %t/part | FileCheck %s --check-prefix=RESUME
// RESUME: resumed from {{.*}}part/step-00000009 (step 9, data at epoch 1, batch 3 of 6)
// RESUME: saved checkpoint {{.*}}part/step-00000012
// RUN: %{strip} < %t/full.jsonl > %t/full.txt
// RUN: %{strip} < %t/part.jsonl > %t/part.txt
// RUN: diff %t/full.txt %t/part.txt

// Consecutive (llm.c's order): 2 batches a shard; resumed after step 3 (in
// shard 1) and after step 6 (the epoch's last batch): the same losses.
// RUN: llmc train %t/ordered.toml --metrics %t/ordered.jsonl > /dev/null
// RUN: llmc train %t/ordered.toml --steps 3 --metrics %t/o.jsonl --checkpoint-dir %t/o > /dev/null
// RUN: llmc train %t/ordered.toml --steps 6 --metrics %t/o.jsonl --resume %t/o | FileCheck %s --check-prefix=ORDERED
// ORDERED: resumed from {{.*}}o/step-00000003 (step 3, data at epoch 0, {{.*}}train_000001.bin token 64)
// RUN: llmc train %t/ordered.toml --metrics %t/o.jsonl --resume %t/o | FileCheck %s --check-prefix=ORDERED2
// ORDERED2: resumed from {{.*}}o/step-00000006 (step 6, data at epoch 1, {{.*}}train_000000.bin token 0)
// RUN: %{strip} < %t/ordered.jsonl > %t/ordered.txt
// RUN: %{strip} < %t/o.jsonl > %t/o.txt
// RUN: diff %t/ordered.txt %t/o.txt
// The two orders train on other batches.
// RUN: not diff -q %t/ordered.txt %t/full.txt

// A finished run says so and exits 0.
// RUN: llmc train %t/shuffled.toml --resume %t/full | FileCheck %s --check-prefix=DONE
// DONE: {{.*}}full/step-00000012 is at step 12 of 12: the run is complete, nothing to train (raise [train] steps to go on)

// SIGINT finishes the step, saves a checkpoint and exits 130; the resumed
// run has the losses of one that was never stopped. SIGTERM exits 143; a
// second signal stops at once, without a checkpoint.
// RUN: sed -e "s|@DIR@|%t/shards|" -e "s|@STEPS@|100000|" -e "s|@SHUFFLE@|true|" -e "s|log_every = 100|log_every = 1|" %S/Inputs/train-shards.toml > %t/long.toml
// RUN: python3 %S/Inputs/interrupt.py "^step +2/" INT -- llmc train %t/long.toml --metrics %t/sig.jsonl --checkpoint-dir %t/sig > %t/sig.log
// RUN: FileCheck %s --check-prefix=SIGINT < %t/sig.log
// SIGINT:      stopping after this step (a second Ctrl-C stops at once)
// SIGINT:      saved checkpoint {{.*}}sig/step-{{[0-9]+}}
// SIGINT-NEXT: llmc train: SIGINT: stopped after step {{[0-9]+}} of 100000; resume with --resume {{.*}}sig
// SIGINT:      exit status 130
// RUN: llmc train %t/long.toml --steps 30 --metrics %t/sig.jsonl --resume %t/sig > /dev/null
// RUN: llmc train %t/long.toml --steps 30 --metrics %t/nosig.jsonl > /dev/null
// RUN: %{strip} < %t/sig.jsonl > %t/sig.txt
// RUN: %{strip} < %t/nosig.jsonl > %t/nosig.txt
// RUN: diff %t/nosig.txt %t/sig.txt
// RUN: python3 %S/Inputs/interrupt.py "^step +2/" TERM -- llmc train %t/long.toml | FileCheck %s --check-prefix=SIGTERM
// SIGTERM: llmc train: SIGTERM: stopped after step {{[0-9]+}} of 100000; no checkpoint was written (no [checkpoint] dir or --checkpoint-dir)
// SIGTERM: exit status 143
// A wider model, so that the second signal comes while the step runs.
// RUN: sed -e "s|width = 32|width = 512|" -e "s|layers = 1|layers = 4|" %t/long.toml > %t/wide.toml
// RUN: python3 %S/Inputs/interrupt.py "^step +2/" INT --twice -- llmc train %t/wide.toml --checkpoint-dir %t/twice | FileCheck %s --check-prefix=TWICE
// TWICE: second signal: stopping now, without a checkpoint
// TWICE: exit status 130
// RUN: not ls %t/twice/latest
// Under llmc launch the launcher passes the signal on once; the rank stops
// cleanly and the launcher exits with its status.
// RUN: python3 %S/Inputs/interrupt.py "step +2/" INT -- llmc launch -n 1 %t/long.toml --checkpoint-dir %t/launched | FileCheck %s --check-prefix=LAUNCH
// LAUNCH: [rank 0] saved checkpoint {{.*}}launched/step-{{[0-9]+}}
// LAUNCH: llmc launch: the ranks stopped on SIGINT (see rank 0's lines for the checkpoint)
// LAUNCH: exit status 130

// Bad data is found before the first step, with the file and the fix.
// RUN: python3 %S/Inputs/make_shards.py %S/../../docs/training.md %t/wide --format v2
// RUN: not llmc train %t/shuffled.toml --data '%t/wide/train_*.bin' 2>&1 | FileCheck %s --check-prefix=VOCAB
// VOCAB: llmc train: {{.*}}wide/train_000000.bin: token 0 (byte offset 1,024) is {{[0-9]+}}, not below the vocabulary size 256; the data was tokenized for a larger vocabulary than the model's: set vocab_size to at least the tokenizer's, or tokenize the data with the model's tokenizer
// RUN: not llmc train %t/shuffled.toml --data '%t/none/train_*.bin' 2>&1 | FileCheck %s --check-prefix=NOMATCH
// NOMATCH: llmc train: [data] train: the pattern '{{.*}}none/train_*.bin' matches no file
// RUN: python3 %S/Inputs/make_shards.py %S/../../docs/training.md %t/tiny --val-tokens 20
// RUN: not llmc train %t/shuffled.toml --val %t/tiny/val_000000.bin 2>&1 | FileCheck %s --check-prefix=SMALLVAL
// SMALLVAL: llmc train: the validation set: {{.*}}tiny/val_000000.bin: 1 file, 20 tokens (uint16): too little data: needs a shard of B*T+1 = 33 tokens for one batch (B=2, T=16), and the largest holds fewer; use a smaller batch or sequence length, or more data (in fewer, larger shards)
