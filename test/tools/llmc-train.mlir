// llmc train: one line per step, JSON-lines metrics, checkpoints, an exact
// --resume, and llmc-run training from a compiled artifact exactly as llmc
// train does. The model trains on the built-in corpus.
// The timing fields differ between runs; STRIP keeps step, loss, lr, grad
// norm and the token count, which must be identical.
// DEFINE: %{strip} = sed -E 's/, "tokens_per_s".*//'

// RUN: rm -rf %t && mkdir -p %t
// RUN: llmc train %S/Inputs/train-tiny.toml --metrics %t/full.jsonl --checkpoint-dir %t/full --sample-tokens 20 | FileCheck %s --check-prefix=TRAIN
// TRAIN-LABEL: training {{.*}}train-tiny.toml: steps 1-8 of 8, 4 sequences x 16 tokens per step, data <built-in corpus>
// The MFU line: the model flops a token (6N + 12 L d T of the tiny model)
// and the peak of the CPU profile of data/devices.toml.
// TRAIN-NEXT:  MFU: 6N + 12 L d T = {{[0-9.e-]+}} GFLOP a token, over cpu's dense f32 peak ({{[0-9.]+}} GFLOP/s) x 1 device
// TRAIN:       step 1/8  loss {{[0-9.]+}}  lr 5.000e-03  grad norm {{[0-9.]+}}  {{[0-9]+}} tok/s  {{[0-9.]+}} ms/step  [ 12%, eta {{[0-9:]+}}]  MFU {{[0-9.]+}}%{{$}}
// TRAIN:       step 4/8
// TRAIN-NEXT:  saved checkpoint {{.*}}full/step-00000004
// TRAIN:       step 8/8  loss {{[0-9.]+}}  lr 1.000e-03
// TRAIN-NEXT:  saved checkpoint {{.*}}full/step-00000008
// TRAIN-NEXT:  done: steps 1-8 in {{[0-9.]+}} s, 512 tokens, {{[0-9]+}} tok/s mean, MFU {{[0-9.]+}}%{{$}}
// TRAIN-NEXT:  sample (20 tokens after a prompt of 16, temperature 0.8):
// TRAIN-NEXT:  {{.+}}

// RUN: FileCheck %s --check-prefix=METRICS < %t/full.jsonl
// METRICS:      {"step": 1, "loss": {{[0-9.]+}}, "lr": 0.00499999989, "grad_norm": {{[0-9.]+}}, "tokens": 64, "tokens_per_s": {{[0-9.]+}}, "ms_per_step": {{[0-9.]+}}, "cpu_ms_per_step": {{[0-9.]+}}, "devices": 1, "tokens_per_s_per_device": {{[0-9.]+}}, "mfu": {{[0-9.]+}}}
// METRICS-COUNT-7: {"step": {{[2-8]}},
// METRICS-NOT:  "step"

// The checkpoint: the latest pointer, the parameters under Hugging Face
// names, the AdamW moments with the step and data position.
// RUN: cat %t/full/latest | FileCheck %s --check-prefix=LATEST
// LATEST: step-00000008
// RUN: head -c 2000 %t/full/step-00000008/model.safetensors | tail -c +9 | FileCheck %s --check-prefix=MODEL
// MODEL: "__metadata__":{"format":"pt","llmc.lineage":"{{[0-9a-f]+}}","llmc.model.xxh64":"{{[0-9a-f]+}}","llmc.optimizer.xxh64":"{{[0-9a-f]+}}","llmc.step":"8"}
// MODEL: "transformer.wte.weight":{"dtype":"F32","shape":[128,32]
// RUN: head -c 4000 %t/full/step-00000008/optimizer.safetensors | tail -c +9 | FileCheck %s --check-prefix=OPTSTATE
// OPTSTATE: "__metadata__":{"data.batch":"0","data.epoch":"0","data.offset":"512","data.seed":"0","data.shard":"0","data.shards":"1","data.tokens":"{{[0-9]+}}","data_position":"512","format":"llmc-checkpoint-1","llmc.files":"model.safetensors,optimizer.safetensors,config.json","llmc.lineage":"{{[0-9a-f]+}}","llmc.model.xxh64":"{{[0-9a-f]+}}","llmc.optimizer.xxh64":"{{[0-9a-f]+}}","llmc.step":"8","seed":"1337","source":"{{.*}}train-tiny.toml","step":"8"}
// OPTSTATE: "optimizer.m.transformer.wte.weight":{"dtype":"F32","shape":[128,32]

// Stopped after step 3 (no checkpoint due there: one is saved at the stop),
// then resumed: the losses are those of the uninterrupted run.
// RUN: llmc train %S/Inputs/train-tiny.toml --steps 3 --metrics %t/part1.jsonl --checkpoint-dir %t/part | FileCheck %s --check-prefix=STOP
// STOP: step 3/8
// STOP-NEXT: saved checkpoint {{.*}}part/step-00000003
// RUN: llmc train %S/Inputs/train-tiny.toml --resume %t/part --metrics %t/part2.jsonl --checkpoint-dir %t/part | FileCheck %s --check-prefix=RESUME
// RESUME: resumed from {{.*}}part/step-00000003 (step 3, data at epoch 0, <built-in corpus> token 192)
// RESUME-NEXT: ready in {{.*}} s: cpu session {{.*}} s, data {{.*}} s, checkpoint {{.*}} s (0.00 s of it drawn on the host)
// RESUME-NEXT: training {{.*}}: steps 4-8 of 8
// --steps is the step to stop after: one before the resumed step is refused,
// with the value that trains that many more.
// RUN: not llmc train %S/Inputs/train-tiny.toml --resume %t/part/step-00000003 --steps 2 --checkpoint-dir %t/part 2>&1 | FileCheck %s --check-prefix=PASTSTOP
// PASTSTOP: llmc train: --steps 2 stops before the step this run starts at (4, after the checkpoint): --steps is the step to stop after, not a number of steps; pass --steps 5 for 2 more
// RUN: cat %t/part1.jsonl %t/part2.jsonl | %{strip} > %t/resumed.txt
// RUN: %{strip} < %t/full.jsonl > %t/full.txt
// RUN: diff %t/full.txt %t/resumed.txt

// The runtime alone trains from the artifact exactly as llmc train does.
// RUN: llmc compile %S/Inputs/train-tiny.toml -o %t/train.llmcx 2>&1 | FileCheck %s --check-prefix=ARTIFACT
// ARTIFACT: wrote {{.*}}train.llmcx: @train_step, {{[0-9]+}} arguments, {{[0-9]+}} outputs
// RUN: llmc-run %t/train.llmcx --metrics %t/run.jsonl --checkpoint-dir %t/run > /dev/null
// RUN: %{strip} < %t/run.jsonl > %t/run.txt
// RUN: diff %t/full.txt %t/run.txt
// RUN: llmc inspect %t/train.llmcx | FileCheck %s --check-prefix=INSPECT
// INSPECT: executable {{.*}}train.llmcx (format 5, by llmc {{.*}}, from {{.*}}train-tiny.toml): @train_step
// INSPECT: state {{ *}}optimizer.m.transformer.wte.weight {{ *}}f32[128, 32]
// INSPECT: input {{ *}}optimizer.step {{ *}}f32[]
// INSPECT: output {{ *}}grad_norm {{ *}}f32[]
// INSPECT: setting train.steps = 8
// INSPECT: companion @logits: 17 arguments, 1 outputs

// Errors say what to do.
// RUN: not llmc train %S/Inputs/train-tiny.toml --resume %t/nothing 2>&1 | FileCheck %s --check-prefix=NORESUME
// NORESUME: llmc train: '{{.*}}nothing' is neither a checkpoint (no optimizer.safetensors) nor a checkpoint directory (no latest); give --resume the [checkpoint] dir of the run or one of its step-NNNNNNNN directories
// RUN: llmc compile %S/Inputs/train-tiny.toml --forward -o %t/forward.llmcx 2> /dev/null
// RUN: not llmc-run %t/forward.llmcx --metrics %t/x.jsonl 2>&1 | FileCheck %s --check-prefix=NOTTRAIN
// NOTTRAIN: llmc-run: --metrics, --resume, --data, --val, --tokenizer, --checkpoint-dir, --device, --steps, --sample-tokens, --trace and --trace-steps are for training (running once is CPU-only); this artifact is not a training step
