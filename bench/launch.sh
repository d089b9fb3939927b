# Sourced by bench/scaling.sh and bench/meshes.sh.
#
#   bench_setup SCRIPT   the environment of a run from $deploy (libraries,
#                        NCCL_NVLS_ENABLE=0, a kernel cache), the output
#                        folder $out ($BENCH_OUT or a new one), and $gpus;
#                        stops unless there are 2 GPUs or more.
bench_setup() {
  export LD_LIBRARY_PATH="$deploy:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
  export NCCL_NVLS_ENABLE=0
  export LLMC_KERNEL_CACHE=${LLMC_KERNEL_CACHE:-$(mktemp -d)/kernels}
  out=${BENCH_OUT:-$(mktemp -d)}
  mkdir -p "$out"
  gpus=$(nvidia-smi -L | wc -l)
  if [ "$gpus" -lt 2 ]; then
    echo "$1: needs at least 2 GPUs, this machine has $gpus"
    exit 1
  fi
}

# Start an artifact as
# `llmc launch -n N` would, on a GPU machine that has no compiler (so no
# `llmc`): N `llmc-run` processes with the torchrun variables, one GPU each
# (docs/distributed.md). Needs $deploy (llmc-run, the libraries).
#
#   llmc_launch N ARTIFACT LOG [llmc-run options...]
#
# N = 1 runs one plain process (no NCCL). Rank 0's output goes to LOG, the
# other ranks' to LOG.rankR; fails if any rank fails, printing its log.
llmc_launch() {
  local n=$1 artifact=$2 log=$3
  shift 3
  if [ "$n" = 1 ]; then
    "$deploy/llmc-run" "$artifact" --device cuda "$@" > "$log" 2>&1 ||
      { echo "llmc-run $artifact failed:"; tail -20 "$log"; return 1; }
    return 0
  fi
  local port=$((29500 + RANDOM % 2000)) pids=() r status=0
  for ((r = 0; r < n; ++r)); do
    local out=$log
    [ "$r" = 0 ] || out=$log.rank$r
    RANK=$r WORLD_SIZE=$n LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 \
      MASTER_PORT=$port NCCL_NVLS_ENABLE=0 \
      "$deploy/llmc-run" "$artifact" --device cuda "$@" > "$out" 2>&1 &
    pids+=($!)
  done
  for r in "${!pids[@]}"; do
    wait "${pids[$r]}" || status=1
  done
  if [ "$status" != 0 ]; then
    echo "llmc-run $artifact on $n GPUs failed:"
    tail -20 "$log" "$log".rank* 2>/dev/null
    return 1
  fi
}
