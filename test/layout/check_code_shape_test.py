"""The code-shape check finds what it must (test/layout/check_code_shape.py):
on a small tree written here, a file of 801 lines, a function of 201, one of
151 without a note, an include from runtime/ up to ir/ and one of
runtime/cuda/ from the rest of the runtime are each reported, and the same
tree without them passes."""
import os
import subprocess
import sys
import tempfile

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                     "check_code_shape.py")


def function(name, lines, note=False):
    body = "".join(f"  x += {i};\n" for i in range(lines - 3))
    head = "// Long: a table.\n" if note else ""
    return f"{head}int {name}(int x) {{\n{body}  return x;\n}}\n"


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def run(root):
    out = subprocess.run([sys.executable, CHECK, root], capture_output=True,
                         text=True)
    return out.returncode, out.stdout


def main():
    with tempfile.TemporaryDirectory() as root:
        write(root, "runtime/Ok.cpp", '#include "runtime/Ok.h"\n' +
              function("short", 20) + function("noted", 180, note=True))
        write(root, "ir/Uses.cpp", '#include "runtime/Ok.h"\n')
        code, out = run(root)
        assert code == 0, out
        assert "noted: 180 lines" in out, out

        write(root, "runtime/Big.cpp", "// a line\n" * 801)
        write(root, "runtime/Long.cpp", function("tooLong", 201) +
              function("unnoted", 151))
        write(root, "runtime/Up.cpp", '#include "ir/Dialect.h"\n')
        write(root, "runtime/train/Gpu.cpp",
              '#include "runtime/cuda/session/CudaSession.h"\n')
        write(root, "tools/Gpu.cpp",
              '#include "runtime/cuda/session/CudaSession.h"\n')
        code, out = run(root)
        assert code == 1, out
        expected = [
            "runtime/Big.cpp: 801 lines (at most 800)",
            "runtime/Long.cpp:1: tooLong is 201 lines (at most 200)",
            "runtime/Long.cpp:202: unnoted is 151 lines: split it, or write why",
            "runtime/Up.cpp:1: includes ir/Dialect.h: runtime/ may include "
            "only runtime",
            "runtime/train/Gpu.cpp:1: includes runtime/cuda/session/"
            "CudaSession.h: only runtime/cuda/",
        ]
        for line in expected:
            assert line in out, f"missing '{line}' in:\n{out}"
        assert "tools/Gpu.cpp" not in out, out
        assert "5 finding(s)" in out, out
    print("ok: the check reports each planted finding and passes a clean tree")


if __name__ == "__main__":
    main()
