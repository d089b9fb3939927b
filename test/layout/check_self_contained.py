"""The project explains itself (docs/architecture.md, "How the code reads").

The design notes the project started from live outside the repository
(../shared/); a newcomer with only the repository must not be sent there.
This fails on any source, doc or script that cites DESIGN.md or STYLE.md.
The benchmark peers in ../shared/bench and ../shared/peers are allowed:
they are programs that bench/ runs, not documents to read.

Usage: check_self_contained.py ROOT   (exit 1 and one line per citation)
       check_self_contained.py --self-test   (plants one citation in a
       temporary tree, expects exactly it, and a clean tree to pass)
"""
import os
import re
import sys
import tempfile

CITATION = re.compile(r"\b(DESIGN|STYLE)(\.md)?\b")
EXTENSIONS = (".cpp", ".h", ".cu", ".cuh", ".inc", ".td", ".md", ".py",
              ".sh", ".txt", ".cmake", ".toml", ".mlir", ".def")
SKIP_DIRS = {".git", ".venv", "_deps", "__pycache__"}
# This file names what it looks for.
SELF = os.path.join("test", "layout", "check_self_contained.py")


def citations(root):
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and
                         not d.startswith("build"))
        for name in sorted(files):
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, root)
            if rel == SELF or not (name.endswith(EXTENSIONS) or
                                   name in ("run", "CMakeLists.txt")):
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                for number, line in enumerate(f, 1):
                    if CITATION.search(line):
                        found.append(f"{rel}:{number}: cites "
                                     f"{CITATION.search(line).group(0)}, "
                                     f"which is not in the repository: say "
                                     f"it here (docs/) instead")
    return found


def self_test():
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "docs"))
        with open(os.path.join(root, "docs", "a.md"), "w") as f:
            f.write("# A\n\nSee ../shared/bench/run.py.\n")
        if citations(root):
            print("self-test: a clean tree was flagged")
            return 1
        with open(os.path.join(root, "docs", "b.md"), "w") as f:
            f.write("# B\n\nAs DESIGN.md step 7 says.\n")
        found = citations(root)
        if len(found) != 1 or not found[0].startswith("docs/b.md:3: cites "
                                                      "DESIGN.md"):
            print(f"self-test: expected docs/b.md:3, got {found}")
            return 1
    print("self-test ok")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    found = citations(root)
    for line in found:
        print(line)
    if found:
        return 1
    print("ok: no citation of DESIGN.md or STYLE.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
