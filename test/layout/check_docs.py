"""The docs say what is true: their links resolve and their commands run.

Two checks over README.md and every docs/**/*.md:

  links     every relative link [text](path) names a file or folder of the
            repository, and every #anchor (in the same page or another .md)
            names a heading of that page, slugged as GitHub does (lowercase,
            punctuation dropped, spaces to hyphens, -1, -2 for repeats).
            Links inside code are not links.
  commands  every command line of a ```sh / ```bash block, and of a plain
            ``` block whose lines are llmc commands, runs (exit 0) in a
            scratch folder where build/bin, examples/, bench/, test/, docs/
            and data/ are those of the repository and the tools are on PATH;
            the lines of one page run in order in one folder (so a
            checkpoint an earlier line writes is there for a later one).
            A line that cannot run here quickly (a GPU, a download, a
            placeholder such as RUN.toml, a long run) is marked in the page,
            invisibly, by an HTML comment on the line before the block:
              <!-- docs-check: skip 1, 4-5 (GPU), 7 (a placeholder) -->
              <!-- docs-check: skip all (needs a Hugging Face download) -->
            numbering the block's command lines from 1; a mark that names no
            command line is an error too, so the marks stay true.

Usage: check_docs.py ROOT [--bin DIR] [--links] [--commands] [--list]
  --bin DIR   the built tools (default ROOT/build/bin)
  --list      print each command line with its page and whether it would
              run, and run none
  (neither --links nor --commands: both)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([\w+-]*)")
LINK = re.compile(r"(?<!!)\[([^\]]*)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|"
                  r"!\[([^\]]*)\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
MARK = re.compile(r"<!--\s*docs-check:\s*skip\s+(.*?)\s*-->")
SHELL_LANGS = {"sh", "bash", "shell", "console"}
COMMAND_START = re.compile(
    r"^(?:\$\s+)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*"
    r"(?:build/bin/\S+|llmc(?:-run|-opt)?|ctest|ninja|tools/\S+|bench/\S+)"
    r"(?:\s+[^\s:]+(?=\s|$)|\s*$)")
LINKED = ("build", "examples", "bench", "test", "docs", "data", "tools")
TIMEOUT_S = 300


def doc_files(root):
    files = [os.path.join(root, "README.md")]
    for folder, dirs, names in os.walk(os.path.join(root, "docs")):
        dirs.sort()
        files += [os.path.join(folder, n) for n in sorted(names)
                  if n.endswith(".md")]
    return files


def slug(heading):
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        seen, found, fenced = {}, set(), False
        with open(path, encoding="utf-8") as f:
            for line in f:
                if FENCE.match(line):
                    fenced = not fenced
                    continue
                m = None if fenced else HEADING.match(line)
                if not m:
                    continue
                s = slug(m.group(2))
                n = seen.get(s, 0)
                seen[s] = n + 1
                found.add(s if n == 0 else f"{s}-{n}")
        cache[path] = found
    return cache[path]


def prose_lines(path):
    """(number, line) outside fenced blocks, inline code blanked."""
    fenced = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                fenced = not fenced
                continue
            if not fenced:
                yield number, re.sub(r"`[^`]*`", "``", line)


def check_links(root):
    problems = []
    for page in doc_files(root):
        rel_page = os.path.relpath(page, root)
        for number, line in prose_lines(page):
            for m in LINK.finditer(line):
                target = m.group(2) or m.group(4)
                if re.match(r"^[a-z]+:", target):
                    continue  # http:, https:, mailto:
                path, _, anchor = target.partition("#")
                full = (page if not path else
                        os.path.normpath(os.path.join(os.path.dirname(page),
                                                      path)))
                where = f"{rel_page}:{number}: link '{target}'"
                if not os.path.exists(full):
                    problems.append(f"{where}: no file "
                                    f"{os.path.relpath(full, root)}")
                    continue
                if not os.path.realpath(full).startswith(
                        os.path.realpath(root)):
                    problems.append(f"{where}: points outside the repository")
                    continue
                if anchor and full.endswith(".md") and \
                        anchor not in anchors(full):
                    problems.append(f"{where}: no heading with anchor "
                                    f"#{anchor} in "
                                    f"{os.path.relpath(full, root)}")
    return problems


def parse_marks(text):
    """'1, 4-5 (GPU), 7 (why)' -> ({1, 4, 5, 7}, False); 'all (why)' -> all."""
    if re.match(r"^all\b", text):
        return set(), True
    numbers = set()
    for part in re.sub(r"\([^)]*\)", "", text).split(","):
        part = part.strip()
        if not part:
            continue
        lo, _, hi = part.partition("-")
        numbers.update(range(int(lo), int(hi or lo) + 1))
    return numbers, False


def command_blocks(page):
    """[(first line number, [(line number, command)], marked, all, mark line)]."""
    blocks, lines = [], open(page, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        lang, start, body = m.group(3).lower(), i, []
        i += 1
        while i < len(lines) and not FENCE.match(lines[i]):
            body.append((i + 1, lines[i]))
            i += 1
        i += 1
        commands, joined = [], []
        for number, line in body:  # a trailing backslash continues a line
            if joined and joined[-1][1].endswith("\\"):
                joined[-1] = (joined[-1][0],
                              joined[-1][1][:-1].rstrip() + " " + line.strip())
            else:
                joined.append((number, line))
        for number, line in joined:
            text = line.strip()
            if lang not in SHELL_LANGS and lang != "":
                break
            if not COMMAND_START.match(text):
                continue
            if lang == "" and not text.startswith(("llmc", "$ llmc",
                                                   "build/bin/")):
                continue
            commands.append((number, re.sub(r"^\$\s+", "", text)))
        if not commands:
            continue
        mark = MARK.search(lines[start - 1]) if start > 0 else None
        numbers, everything = parse_marks(mark.group(1)) if mark else (set(),
                                                                        False)
        blocks.append((start + 1, commands, numbers, everything,
                       start if mark else None))
    return blocks


def strip_comment(command):
    """The shell comment at the end of a line, outside quotes."""
    quote = None
    for i, c in enumerate(command):
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or command[i - 1].isspace()):
            return command[:i].rstrip()
    return command


def scratch_folder(root, bin_dir):
    folder = tempfile.mkdtemp(prefix="llmc-docs-")
    for name in LINKED:
        if name != "build" and os.path.exists(os.path.join(root, name)):
            os.symlink(os.path.join(root, name), os.path.join(folder, name))
    os.makedirs(os.path.join(folder, "build"))
    os.symlink(bin_dir, os.path.join(folder, "build", "bin"))
    return folder


def check_commands(root, bin_dir, listing):
    problems, ran, skipped = [], 0, 0
    env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ["PATH"])
    for page in doc_files(root):
        rel_page = os.path.relpath(page, root)
        blocks = command_blocks(page)
        if not blocks:
            continue
        folder = scratch_folder(root, bin_dir)
        try:
            for start, commands, marked, everything, mark_line in blocks:
                for bad in sorted(n for n in marked if n > len(commands)):
                    problems.append(f"{rel_page}:{mark_line}: the mark names "
                                    f"command {bad}, the block at line "
                                    f"{start} has {len(commands)}")
                for index, (number, command) in enumerate(commands, 1):
                    runs = not everything and index not in marked
                    if listing:
                        print(f"{rel_page}:{number}: "
                              f"{'run ' if runs else 'skip'} {command}")
                    if not runs or listing:
                        skipped += not runs
                        continue
                    ran += 1
                    began = time.monotonic()
                    try:
                        out = subprocess.run(
                            ["bash", "-c", strip_comment(command)], cwd=folder,
                            env=env, capture_output=True, text=True,
                            timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)
                        code, text = out.returncode, out.stdout + out.stderr
                    except subprocess.TimeoutExpired:
                        code, text = "timeout", f"past {TIMEOUT_S} s"
                    seconds = time.monotonic() - began
                    print(f"{rel_page}:{number}: exit {code} in {seconds:.1f} "
                          f"s: {command[:100]}", flush=True)
                    if code != 0:
                        tail = "\n    ".join(text.strip().splitlines()[-8:])
                        problems.append(
                            f"{rel_page}:{number}: '{command}' exited {code}; "
                            f"fix the page, or mark the line "
                            f"(<!-- docs-check: skip {index} (why) --> before "
                            f"the block):\n    {tail}")
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"commands: {ran} ran, {skipped} marked as not runnable here")
    return problems


def main(argv):
    args = argv[1:]
    if not args or args[0].startswith("-"):
        print(__doc__)
        return 2
    root = os.path.abspath(args.pop(0))
    bin_dir, links, commands, listing = os.path.join(root, "build", "bin"), \
        False, False, False
    while args:
        arg = args.pop(0)
        if arg == "--bin" and args:
            bin_dir = os.path.abspath(args.pop(0))
        elif arg in ("--links", "--commands", "--list"):
            links |= arg == "--links"
            commands |= arg == "--commands"
            listing |= arg == "--list"
        else:
            print(__doc__)
            return 2
    if not links and not commands:
        links = commands = True
    problems = []
    if links:
        found = check_links(root)
        print(f"links: {len(found)} broken in {len(doc_files(root))} pages")
        problems += found
    if commands:
        problems += check_commands(root, bin_dir, listing)
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
