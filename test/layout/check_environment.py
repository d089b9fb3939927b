"""Every LLMC_* environment variable is documented, once (docs/environment.md).

Three lists must name the same variables:
  1. the code: every string literal "LLMC_NAME" in the C++ sources outside
     test/ and bench/ (what getenv, or a helper such as envOff, is given);
  2. the table of docs/environment.md (rows that start with | `LLMC_...`);
  3. the help: tools/EnvironmentHelp.h, and, given --help-of BIN (repeatable),
     what `BIN --help` prints under ENVIRONMENT.
A variable the code reads that a list lacks fails, and so does a listed
variable that no code reads any more.

Usage: check_environment.py ROOT [--help-of BIN]...   (exit 1, one line per
       difference)
       check_environment.py --self-test   (a planted getenv and a stale row
       must be found in a temporary tree, a clean one must pass)
"""
import os
import re
import subprocess
import sys
import tempfile

LITERAL = re.compile(r'"(LLMC_[A-Z0-9_]+)"')
TABLE_ROW = re.compile(r"^\|\s*`(LLMC_[A-Z0-9_]+)`")
HELP_LINE = re.compile(r"^\s*\"?\s+(LLMC_[A-Z0-9_]+)[= ]")
SOURCES = (".cpp", ".h", ".cu", ".cuh", ".inc", ".def")
SKIP_TOP = {"test", "bench", "docs", "examples", ".git", ".venv"}
TABLE = os.path.join("docs", "environment.md")
HELP = os.path.join("tools", "EnvironmentHelp.h")


def read_by_code(root):
    """Variable -> the first file that names it as a whole literal."""
    found = {}
    for folder, dirs, files in os.walk(root):
        rel_folder = os.path.relpath(folder, root)
        if rel_folder == ".":
            dirs[:] = [d for d in dirs if d not in SKIP_TOP and
                       not d.startswith("build")]
        dirs[:] = sorted(d for d in dirs if d not in ("_deps", "__pycache__"))
        for name in sorted(files):
            if not name.endswith(SOURCES):
                continue
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                for var in LITERAL.findall(f.read()):
                    found.setdefault(var, os.path.relpath(path, root))
    return found


def names(path, pattern):
    with open(path, encoding="utf-8") as f:
        return {m.group(1) for line in f for m in [pattern.match(line)] if m}


def printed_help(binary):
    out = subprocess.run([binary, "--help"], capture_output=True, text=True,
                         timeout=60)
    text = out.stdout + out.stderr
    if "ENVIRONMENT" not in text:
        return set()
    section = text.split("ENVIRONMENT", 1)[1]
    return {m.group(1) for line in section.splitlines()
            for m in [re.match(r"^\s+(LLMC_[A-Z0-9_]+)[= ]", line)] if m}


def differences(root, helps=()):
    code = read_by_code(root)
    lists = {TABLE: names(os.path.join(root, TABLE), TABLE_ROW),
             HELP: names(os.path.join(root, HELP), HELP_LINE)}
    for binary in helps:
        lists[f"{os.path.basename(binary)} --help"] = printed_help(binary)
    problems = []
    for where, listed in lists.items():
        for var in sorted(set(code) - listed):
            problems.append(f"{code[var]} reads {var}, which {where} does "
                            f"not list: add it there")
        for var in sorted(listed - set(code)):
            problems.append(f"{where} lists {var}, which no code outside "
                            f"test/ and bench/ reads: remove it")
    return problems


def self_test():
    with tempfile.TemporaryDirectory() as root:
        for folder in ("docs", "tools", "runtime", "test"):
            os.makedirs(os.path.join(root, folder))

        def write(rel, text):
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)

        write("runtime/A.cpp", 'auto a = std::getenv("LLMC_A");\n')
        write("test/T.cpp", 'setenv("LLMC_ONLY_TESTS", "1", 1);\n')
        write(TABLE, "| variable |\n| --- |\n| `LLMC_A` | x |\n")
        write(HELP, '"  LLMC_A=1   a\\n"\n')
        if differences(root):
            print(f"self-test: a clean tree was flagged: {differences(root)}")
            return 1
        write("runtime/B.cpp", 'bool b = envOff("LLMC_B");\n')
        write(TABLE, "| `LLMC_A` | x |\n| `LLMC_OLD` | y |\n")
        found = differences(root)
        want = [f"runtime/B.cpp reads LLMC_B, which {TABLE} does not list",
                f"{TABLE} lists LLMC_OLD, which no code",
                f"runtime/B.cpp reads LLMC_B, which {HELP} does not list"]
        if len(found) != 3 or not all(any(p.startswith(w) for p in found)
                                      for w in want):
            print(f"self-test: expected {want}, got {found}")
            return 1
    print("self-test: passed")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) < 2:
        print(__doc__)
        return 2
    root, helps, rest = argv[1], [], argv[2:]
    while rest:
        if rest[0] != "--help-of" or len(rest) < 2:
            print(__doc__)
            return 2
        helps.append(rest[1])
        rest = rest[2:]
    problems = differences(root, helps)
    for line in problems:
        print(line)
    if not problems:
        print(f"environment: {len(read_by_code(root))} LLMC_ variables, each "
              f"in {TABLE}, {HELP} and {len(helps)} --help outputs")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
