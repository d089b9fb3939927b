#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine (see README.md):
#
#   tools/dev.sh demo   install what is missing, build, run the main job
#   tools/dev.sh test   install what is missing, build, run every test, then
#                       replay the fuzz corpora, fuzz each parser 15 s, and
#                       run the no-MLIR suites under ASan + UBSan
#   tools/dev.sh build  install what is missing and build
#   tools/dev.sh fuzz [SECONDS]  build the libFuzzer targets of the parsers
#                       (clang, build-fuzz/) and run each SECONDS (60)
#   tools/dev.sh build-fuzz  only build them
#   tools/dev.sh test-asan  build with ASan + UBSan (gcc, build-asan/) and
#                       run the CPU suites
#   tools/dev.sh build-asan  only build that
#
# Running it again redoes nothing that is done: packages already installed
# are not touched, the build is incremental (Ninja + ccache), and the Python
# test packages (test/requirements.txt, into .venv/) are installed again
# only when that file changes.
# Environment: BUILD_DIR (default ./build), JOBS (default: all cores),
# FUZZ_DIR (./build-fuzz), ASAN_DIR (./build-asan), FUZZ_RUNS (stop each
# target after that many executions), FUZZ_TARGETS (some of them),
# FUZZ_CI_RUNS, FUZZ_CI_SECONDS, FUZZ_CI_SEED (test's fuzzing per target:
# 150000 executions, at most 30 s, seed 1).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
jobs=${JOBS:-$(nproc)}

# Debian packages the build and the tests need (docs/testing.md, "Commands").
apt_packages=(
  cmake ninja-build ccache g++ clang libclang-rt-14-dev python3 python3-venv binutils
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  googletest libgtest-dev libbenchmark-dev
  libtomlplusplus-dev libopenblas-dev nlohmann-json3-dev
  libpcre2-dev libutf8proc-dev
)

# ccache keys on paths relative to the checkout, so a fresh clone elsewhere
# (CI clones into a new folder each time) still hits the cache.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}

log() { printf '[dev.sh] %s\n' "$*" >&2; }

install_packages() {
  local missing=()
  for pkg in "${apt_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$pkg")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    log "packages: all ${#apt_packages[@]} present"
    return
  fi
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { log "need root (or sudo) to install: ${missing[*]}"; exit 1; }
    sudo=(sudo)
  fi
  log "packages: installing ${missing[*]}"
  "${sudo[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# The Python packages of the numerical tests (JAX, test/parity/), in
# $root/.venv. The stamp holds the sha256 of the requirements file that was
# installed; pip runs only when it differs.
install_python_packages() {
  local venv=$root/.venv requirements=$root/test/requirements.txt
  local stamp=$venv/.requirements.sha256 want
  want=$(sha256sum "$requirements" | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$venv/bin/python" ]; then
    log "python: packages of test/requirements.txt present in .venv"
    return
  fi
  if [ ! -x "$venv/bin/python" ]; then
    log "python: creating $venv"
    python3 -m venv "$venv"
  fi
  log "python: installing test/requirements.txt into .venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements"
  printf '%s\n' "$want" >"$stamp"
}

# The cuDNN frontend's C++ headers (header-only; attention through cuDNN,
# docs/cuda.md), pinned, from PyPI into the build folder. cuDNN itself is
# loaded at run time where it is installed. Without network the build goes
# on with llmc's own attention kernels (CMake says so).
cudnn_frontend_version=1.32.0
install_cudnn_frontend() {
  command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] || return 0
  local target=$build_dir/_deps/cudnn_frontend
  local stamp=$target/.version
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$cudnn_frontend_version" ]; then
    return
  fi
  local venv=$root/.venv
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  log "cudnn frontend: installing nvidia-cudnn-frontend==$cudnn_frontend_version headers into $target"
  rm -rf "$target"
  if "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps \
      --target "$target" "nvidia-cudnn-frontend==$cudnn_frontend_version"; then
    printf '%s\n' "$cudnn_frontend_version" >"$stamp"
    # A configured build looks for the headers again.
    if [ -f "$build_dir/CMakeCache.txt" ]; then
      sed -i '/^LLMC_CUDNN_FRONTEND_INCLUDE:/d' "$build_dir/CMakeCache.txt"
    fi
  else
    log "cudnn frontend: not installed (no network?); attention will run llmc's own kernels"
  fi
}

configure_and_build() {
  install_cudnn_frontend
  if [ ! -f "$build_dir/build.ninja" ]; then
    log "configuring $build_dir"
    cmake -G Ninja -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release
  fi
  log "building with $jobs jobs"
  local start=$SECONDS
  ninja -C "$build_dir" -j "$jobs"
  log "build finished in $((SECONDS - start)) s"
}

# ASan + UBSan (gcc, as the main build) in $asan_dir, without the CUDA
# backend. By default the suites that need no MLIR (the runtime library:
# kernels, collectives, sessions, files, data, tokenizers, executables; and
# the run-description / config.json parsers), run binary by binary;
# ASAN_ALL=1 builds everything and runs the whole ctest but the cuda label
# (docs/testing.md, "Fuzzing and sanitizers", says why CI runs the subset).
# -O2 keeps the numerical tests' time reasonable; -g1 gives file:line.
asan_dir=${ASAN_DIR:-$root/build-asan}
asan_flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g1"
asan_suites=(runtime-tests kernel-tests composite-kernel-tests io-tests
  collectives-tests rendezvous-tests executable-tests sample-tests
  tokenizer-tests config-tests)
export_sanitizer_options() {
  local supp=$root/test/sanitizers
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:check_initialization_order=1}
  export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$supp/lsan.supp:print_suppressions=0}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
}
build_asan() {
  if [ ! -f "$asan_dir/build.ninja" ]; then
    log "configuring $asan_dir (ASan + UBSan)"
    cmake -G Ninja -S "$root" -B "$asan_dir" -DCMAKE_BUILD_TYPE=Release \
      -DLLMC_CUDA=OFF -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
      -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" \
      -DCMAKE_CXX_FLAGS="$asan_flags" -DCMAKE_C_FLAGS="$asan_flags" \
      -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
      -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" \
      -DCMAKE_MODULE_LINKER_FLAGS="-fsanitize=address,undefined"
  fi
  local targets=("${asan_suites[@]}")
  [ -n "${ASAN_ALL:-}" ] && targets=()
  log "building $asan_dir with $jobs jobs: ${targets[*]:-everything}"
  local start=$SECONDS
  ninja -C "$asan_dir" -j "$jobs" "${targets[@]}"
  log "asan build finished in $((SECONDS - start)) s"
}
test_asan() {
  export_sanitizer_options
  local start=$SECONDS failed=0 suite
  if [ -n "${ASAN_ALL:-}" ]; then
    ctest --test-dir "$asan_dir" --output-on-failure -j "$jobs" -LE cuda || failed=1
  else
    for suite in "${asan_suites[@]}"; do
      local t=$SECONDS
      (cd "$asan_dir" && "bin/$suite" --gtest_brief=1) || failed=1
      log "asan $suite: $((SECONDS - t)) s"
    done
  fi
  log "asan tests finished in $((SECONDS - start)) s"
  return $failed
}

# The libFuzzer targets (test/fuzz/, docs/testing.md "Fuzzing and
# sanitizers"): the parsers alone, built by clang with coverage, ASan and
# UBSan in $fuzz_dir. Each target runs SECONDS (or FUZZ_RUNS executions,
# whichever comes first) on a working corpus in $fuzz_dir/corpus/NAME,
# seeded from test/fuzz/corpus/NAME; what it finds lands in
# $fuzz_dir/findings/NAME/ and fails the command. FUZZ_TARGETS picks some.
fuzz_dir=${FUZZ_DIR:-$root/build-fuzz}
build_fuzz() {
  if [ ! -f "$fuzz_dir/build.ninja" ]; then
    log "configuring $fuzz_dir (libFuzzer, clang)"
    CC=clang CXX=clang++ cmake -G Ninja -S "$root" -B "$fuzz_dir" \
      -DLLMC_FUZZ=ON -DCMAKE_BUILD_TYPE=Release
  fi
  log "building $fuzz_dir with $jobs jobs"
  local start=$SECONDS
  ninja -C "$fuzz_dir" -j "$jobs"
  log "fuzz build finished in $((SECONDS - start)) s"
}
run_fuzz() {
  local seconds=${1:-60} failed=0 name
  local targets=${FUZZ_TARGETS:-$(cat "$fuzz_dir/fuzz-targets.txt")}
  export_sanitizer_options
  # Replay first: the seeds and every input that once failed.
  ctest --test-dir "$fuzz_dir" --output-on-failure -R '^fuzz-replay-' || failed=1
  for name in $targets; do
    local work=$fuzz_dir/corpus/$name findings=$fuzz_dir/findings/$name
    local log=$fuzz_dir/logs/$name.log
    mkdir -p "$work" "$findings" "$fuzz_dir/logs"
    log "fuzz $name: ${seconds} s${FUZZ_RUNS:+ or $FUZZ_RUNS runs}"
    if ! "$fuzz_dir/bin/fuzz-$name" "$work" "$root/test/fuzz/corpus/$name" \
        -max_total_time="$seconds" ${FUZZ_RUNS:+-runs=$FUZZ_RUNS} -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$findings/" \
        ${FUZZ_FLAGS:-} >"$log" 2>&1; then
      failed=1
      log "fuzz $name: FAILED, input in $findings/, log $log"
      tail -n 40 "$log" >&2
    fi
    local runs rate
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    log "fuzz $name: ${runs:-?} executions, ${rate:-?}/s, corpus $(ls "$work" | wc -l) inputs"
  done
  return $failed
}

case "${1:-}" in
  demo)
    install_packages
    configure_and_build
    log "main job: llmc train (the built-in run: a small GPT on the built-in corpus, CPU)"
    "$build_dir/bin/llmc" train
    ;;
  test)
    install_packages
    install_python_packages
    configure_and_build
    ctest --test-dir "$build_dir" --output-on-failure -j "$jobs"
    # The fuzz targets, briefly (docs/testing.md, "Fuzzing and sanitizers"):
    # the corpus and the regression inputs replayed, then FUZZ_CI_RUNS
    # (150000) executions of each, at most FUZZ_CI_SECONDS (30). The seed is
    # fixed so that every run of this command makes the same mutations: a
    # find fails it on every machine, not on one CI run in ten (the
    # open-ended search with fresh seeds is `tools/dev.sh fuzz`).
    build_fuzz
    FUZZ_RUNS=${FUZZ_CI_RUNS:-150000} \
      FUZZ_FLAGS="-seed=${FUZZ_CI_SEED:-1} ${FUZZ_FLAGS:-}" \
      run_fuzz "${FUZZ_CI_SECONDS:-30}"
    # The no-MLIR suites under ASan + UBSan (about 8 minutes of build on
    # 2 cores without ccache, 17 s of tests).
    build_asan
    test_asan
    ;;
  build)
    install_packages
    configure_and_build
    ;;
  test-asan)
    install_packages
    install_python_packages
    build_asan
    test_asan
    ;;
  fuzz)
    install_packages
    build_fuzz
    run_fuzz "${2:-60}"
    ;;
  build-fuzz)
    install_packages
    build_fuzz
    ;;
  build-asan)
    install_packages
    build_asan
    ;;
  *)
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"
    exit 2
    ;;
esac
