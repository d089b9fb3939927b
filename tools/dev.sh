#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine (see README.md):
#
#   tools/dev.sh demo   install what is missing, build, run the main job
#   tools/dev.sh test   install what is missing, build, run every test
#   tools/dev.sh build  install what is missing and build
#
# Running it again redoes nothing that is done: packages already installed
# are not touched, the build is incremental (Ninja + ccache), and the Python
# test packages (test/requirements.txt, into .venv/) are installed again
# only when that file changes.
# Environment: BUILD_DIR (default ./build), JOBS (default: all cores).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
jobs=${JOBS:-$(nproc)}

# Debian packages the build and the tests need (docs/testing.md, "Commands").
apt_packages=(
  cmake ninja-build ccache g++ python3 python3-venv binutils
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
    ;;
  build)
    install_packages
    configure_and_build
    ;;
  *)
    sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
