"""The shape of the code (issue #29, docs/architecture.md "How the code reads").

Checks, over every C++ and CUDA source of the repository (.cpp, .h, .cu,
.cuh, .inc; the tests included):

  1. No file over MAX_FILE_LINES lines.
  2. No function over MAX_FUNCTION_LINES lines (its signature to its closing
     brace). Functions over NOTE_FUNCTION_LINES are listed, and each must
     carry a comment within the lines just above it that contains "Long:"
     and says why it is not split (docs/architecture.md).
  3. Includes run one way between the top folders: a file may include its
     own folder or one listed before it in LAYERS (runtime first: it has no
     MLIR; tools last). test/, bench/ and examples/ may include anything.
     Inside runtime/, only runtime/cuda/ includes runtime/cuda/ (the CUDA
     backend is optional: the rest of the runtime builds without it).

Function bounds come from lizard (PyPI), which parses C and C++ (templates,
lambdas, macros) without a compile database; clang-tidy's
readability-function-size would need every file compiled against MLIR's
headers (minutes on two cores). lizard does not know .cu/.cuh, so those are
given to it as C++, which they are as far as function bounds go.

Usage: check_code_shape.py ROOT   (exit 1 and one line per finding on failure)
"""
import os
import re
import sys

from lizard import analyze_file

MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 200
NOTE_FUNCTION_LINES = 150
# How far above a long function its "Long:" note may start.
NOTE_WINDOW = 40

LAYERS = ["runtime", "ir", "sharding", "analysis", "frontend", "passes",
          "planner", "codegen", "tools"]
FREE = ["test", "bench", "examples"]
EXTENSIONS = (".cpp", ".h", ".hpp", ".cu", ".cuh", ".inc", ".c")
SKIP_DIRS = {"build", ".venv", "_deps", ".git", "__pycache__"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def sources(root):
    for top in LAYERS + FREE:
        for folder, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and
                             not d.startswith("build"))
            for name in sorted(files):
                if name.endswith(EXTENSIONS):
                    path = os.path.join(folder, name)
                    yield os.path.relpath(path, root), path


def check_includes(rel, lines, findings):
    top = rel.split("/")[0]
    if top in FREE:
        return
    rank = LAYERS.index(top)
    in_cuda = rel.startswith("runtime/cuda/")
    for number, line in enumerate(lines, 1):
        match = INCLUDE.match(line)
        if not match:
            continue
        target = match.group(1)
        target_top = target.split("/")[0]
        if target_top in LAYERS and LAYERS.index(target_top) > rank:
            findings.append(
                f"{rel}:{number}: includes {target}: {top}/ may include only "
                f"{', '.join(LAYERS[:rank + 1])} (docs/architecture.md)")
        if (target.startswith("runtime/cuda/") and top == "runtime" and
                not in_cuda):
            findings.append(
                f"{rel}:{number}: includes {target}: only runtime/cuda/ may "
                f"include the optional CUDA backend")


def has_note(lines, start_line):
    first = max(0, start_line - 1 - NOTE_WINDOW)
    return any("Long:" in line for line in lines[first:start_line + 2])


def check_functions(rel, text, lines, findings, long_ones):
    as_cpp = re.sub(r"\.(cu|cuh|inc)$", ".cpp", rel)
    info = analyze_file.analyze_source_code(as_cpp, text)
    for function in info.function_list:
        length = function.length
        where = f"{rel}:{function.start_line}: {function.name}"
        if length > MAX_FUNCTION_LINES:
            findings.append(f"{where} is {length} lines (at most "
                            f"{MAX_FUNCTION_LINES}): split it into named steps")
        elif length > NOTE_FUNCTION_LINES:
            noted = has_note(lines, function.start_line)
            long_ones.append(f"{where}: {length} lines" +
                             ("" if noted else "  (no 'Long:' note)"))
            if not noted:
                findings.append(
                    f"{where} is {length} lines: split it, or write why not "
                    f"in a comment with 'Long:' just above it")


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    findings, long_ones = [], []
    files = 0
    for rel, path in sources(root):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        lines = text.split("\n")
        files += 1
        count = text.count("\n") + (0 if text.endswith("\n") else 1)
        if count > MAX_FILE_LINES:
            findings.append(f"{rel}: {count} lines (at most {MAX_FILE_LINES}):"
                            f" split it by family or by job")
        check_includes(rel, lines, findings)
        check_functions(rel, text, lines, findings, long_ones)
    print(f"checked {files} files: at most {MAX_FILE_LINES} lines a file, "
          f"{MAX_FUNCTION_LINES} a function, includes in the order "
          f"{' < '.join(LAYERS)}")
    if long_ones:
        print(f"functions over {NOTE_FUNCTION_LINES} lines:")
        for line in long_ones:
            print("  " + line)
    if findings:
        print(f"{len(findings)} finding(s):")
        for line in findings:
            print("  " + line)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
