"""How long llmc takes to load a 1B Hugging Face checkpoint onto the GPU
(issue #23: "loading a 1B model takes seconds"), on the GPU machine.

    python3 bench/hf_load_1b.py LLMC_RUN LLAMA_1B_LLMCX WORKDIR

Writes a random LlamaForCausalLM with bench/llama-1b.toml's sizes (0.98B
parameters, untied head) with transformers' save_pretrained in bf16 (one
2 GB model.safetensors and, sharded at 500MB, an index with 5 shards),
then trains 3 steps of llama-1b.llmcx from each folder with llmc-run on the
GPU and prints llmc's own "weights: ..." line (parameters, files,
conversions, seconds) and the start-up line. The bf16 tensors are widened
to the f32 master weights on the device.
"""
import re
import subprocess
import sys
import time

import torch
from transformers import LlamaConfig, LlamaForCausalLM

llmc_run, artifact, work = sys.argv[1], sys.argv[2], sys.argv[3]
config = LlamaConfig(vocab_size=32000, hidden_size=2048, intermediate_size=5632,
                     num_hidden_layers=18, num_attention_heads=16, num_key_value_heads=8,
                     rms_norm_eps=1e-5, rope_theta=10000.0, tie_word_embeddings=False,
                     max_position_embeddings=1024)
begin = time.time()
with torch.device("cuda"):
    model = LlamaForCausalLM(config).to(torch.bfloat16)
print(f"transformers: {sum(p.numel() for p in model.parameters()):,} parameters "
      f"in {time.time() - begin:.1f} s", flush=True)
for name, shard in [("one-file", "50GB"), ("sharded", "500MB")]:
    begin = time.time()
    model.save_pretrained(f"{work}/{name}", max_shard_size=shard)
    print(f"save_pretrained {name}: {time.time() - begin:.1f} s", flush=True)
for name in ["one-file", "sharded"]:
    begin = time.time()
    out = subprocess.run([llmc_run, artifact, "--device", "cuda", "--steps", "3",
                          "--weights", f"{work}/{name}"],
                         capture_output=True, text=True)
    wall = time.time() - begin
    if out.returncode != 0:
        print(out.stdout + out.stderr)
        sys.exit(1)
    lines = [l for l in out.stdout.splitlines() + out.stderr.splitlines()
             if re.match(r"(weights:|ready in|step +1/)", l)]
    print(f"[{name}] llmc-run wall {wall:.1f} s")
    for line in lines:
        print(f"[{name}] {line}")
