#!/usr/bin/env bash
# llmc against transformers on Hugging Face checkpoints (issue #23), on the
# GPU machine (torch, transformers 5, safetensors; llmc-run on its CPU).
#
#   bench/hf_parity.sh DEPLOY [WORKDIR]
#
# DEPLOY: the folder `ninja -C build hf-parity-deploy` fills on the build
# machine (llmc-run and its libraries, the configs and the artifacts
# compiled from them, hf_parity.py). Prints a table per model: the loss and
# the worst gradient against transformers (1e-5 relative), the bf16 copy,
# and the logits of an exported folder loaded by from_pretrained; copy it
# into bench/RESULTS.md. Exit status 1 when a model disagrees.
set -euo pipefail
deploy=$(cd "$1" && pwd)
work=${2:-$(mktemp -d)}
mkdir -p "$work"
export LD_LIBRARY_PATH="$deploy:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
python3 "$deploy/hf_parity.py" run --deploy "$deploy" --workdir "$work" \
  --json "$work/hf_parity.json"
