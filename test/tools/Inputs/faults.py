"""Faults in the training loop (issue #27), for llmc-train-faults.mlir.

    python3 faults.py [--llmc-run PATH] kill ARTIFACT WORKDIR [--kills 20]
        [--seed 27]
    python3 faults.py [--llmc-run PATH] full-disk ARTIFACT WORKDIR
        [--no-mount]

kill: trains ARTIFACT (llmc-run, a checkpoint every step) once without
interruption, then again with SIGKILL at random moments (a seeded RNG
draws each as a checkpoint to wait for and a delay after it, so that the
moments do not depend on the machine's speed), resuming from the
checkpoint directory after each kill, until KILLS kills have landed; then
it lets the run finish. Every step's loss, lr and grad norm in the metrics
file must equal the uninterrupted run's, and each step appear once.

full-disk: trains to step 1, then resumes with a file system that cannot
hold another checkpoint: a tmpfs just larger than one checkpoint where this
process may mount one (root), else a file-size limit (RLIMIT_FSIZE, with
SIGXFSZ ignored so that writes fail with EFBIG instead of killing the
process). The resumed run must fail naming the error, leave `latest` on
step 1 with its files unchanged, and a resume from it must give the
uninterrupted run's losses. Prints which way the disk was filled.
"""
import argparse
import filecmp
import json
import os
import pathlib
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import time

TIMING = re.compile(r', "(tokens_per_s|ms_per_step|cpu_ms_per_step|tokens_per_s_per_device|mfu)": [^,}]*')


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def steps_of(metrics):
    """step -> the metrics line without its timings; fails on a repeat."""
    steps = {}
    for line in pathlib.Path(metrics).read_text().splitlines():
        record = json.loads(TIMING.sub("", line))
        if record["step"] in steps:
            fail(f"{metrics}: step {record['step']} appears twice")
        steps[record["step"]] = record
    return steps


LLMC_RUN = "llmc-run"


def llmc_run(artifact, work, *extra, **kwargs):
    command = [LLMC_RUN, str(artifact), "--sample-tokens", "0",
               "--threads", "1", "--metrics", str(work / "metrics.jsonl"),
               *map(str, extra)]
    return subprocess.Popen(command, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, **kwargs)


def reference(artifact, work):
    work.mkdir(parents=True)
    started = time.monotonic()
    proc = llmc_run(artifact, work, "--checkpoint-dir", work / "ck")
    first_save, lines = None, []
    for line in proc.stdout:
        lines.append(line)
        if first_save is None and line.startswith("saved checkpoint"):
            first_save = time.monotonic() - started
    if proc.wait() != 0 or first_save is None:
        fail("the uninterrupted run failed:\n" + "".join(lines))
    return steps_of(work / "metrics.jsonl"), time.monotonic() - started, \
        first_save


def latest_step(ck):
    """The step of the checkpoint `latest` names, 0 without one."""
    try:
        return int((ck / "latest").read_text().strip()[len("step-"):])
    except (OSError, ValueError):
        return 0


def kill(args):
    root = pathlib.Path(args.workdir)
    shutil.rmtree(root, ignore_errors=True)
    expected, _, _ = reference(args.artifact, root / "reference")
    work = root / "killed"
    work.mkdir()
    ck = work / "ck"
    rng = random.Random(args.seed)
    kills = restarts = 0
    resumed_from = []
    while True:
        resume = []
        if (ck / "latest").exists():
            resume = ["--resume", ck]
            resumed_from.append(int((ck / "latest").read_text().strip()[5:]))
        proc = llmc_run(args.artifact, work, "--checkpoint-dir", ck, *resume)
        restarts += 1
        if kills < args.kills:
            # Anywhere in a run: in the start-up, in a step, in a save. The
            # moment is drawn as the checkpoint to wait for (the one the run
            # resumed from, or the next) and up to 20 ms after it, so that it
            # does not depend on the machine's speed.
            target = latest_step(ck) + rng.randint(0, 1)
            delay = rng.uniform(0.0, 0.02)
            while proc.poll() is None and latest_step(ck) < target:
                time.sleep(0.001)
            time.sleep(delay)
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                kills += 1
        output, _ = proc.communicate()
        if proc.returncode == 0:
            if kills < args.kills:
                fail(f"the run finished after {kills} kills; make it longer")
            break
        if proc.returncode != -signal.SIGKILL:
            fail(f"run {restarts} failed (exit {proc.returncode}):\n{output}")
        if restarts > 10 * args.kills:
            fail("no progress")
    got = steps_of(work / "metrics.jsonl")
    if got != expected:
        wrong = sorted(s for s in expected if got.get(s) != expected[s])
        fail(f"steps {wrong[:5]} differ from the uninterrupted run, e.g. "
             f"{got.get(wrong[0]) if wrong else None} vs "
             f"{expected[wrong[0]] if wrong else None}")
    print(f"{kills} kills, {restarts} runs: the losses of steps 1-"
          f"{max(expected)} equal the uninterrupted run's")
    print(f"resumed from steps {resumed_from}")
    if len(set(resumed_from)) < 3:
        fail("the kills did not land across the run")


def can_mount_tmpfs(directory, size):
    if os.geteuid() != 0:
        return False
    directory.mkdir(parents=True)
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}",
                             "tmpfs", str(directory)], capture_output=True)
    return result.returncode == 0


def full_disk(args):
    root = pathlib.Path(args.workdir)
    if (root / "disk").is_mount():
        subprocess.run(["umount", str(root / "disk")])
    shutil.rmtree(root, ignore_errors=True)
    expected, _, _ = reference(args.artifact, root / "reference")
    step1 = root / "reference" / "ck"
    # 1. Step 1, saved on a disk with room for it.
    first = root / "first"
    first.mkdir()
    proc = llmc_run(args.artifact, first, "--checkpoint-dir",
                    first / "ck", "--steps", "1")
    output, _ = proc.communicate()
    if proc.returncode != 0:
        fail(f"step 1 failed:\n{output}")
    size = sum(f.stat().st_size for f in (first / "ck").rglob("*")
               if f.is_file())
    disk = root / "disk"
    # Room for one checkpoint and a half: the second cannot fit.
    mounted = not args.no_mount and can_mount_tmpfs(disk, size * 3 // 2)
    if not mounted:
        disk.mkdir(parents=True, exist_ok=True)
    ck = disk / "ck"
    shutil.copytree(first / "ck", ck, symlinks=True)
    shutil.copytree(first / "ck", root / "saved", symlinks=True)
    try:
        # 2. Resumed on the full disk: the save of step 2 fails.
        def limit():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            # Smaller than the model file: no checkpoint file can be written.
            resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        proc = llmc_run(args.artifact, first, "--checkpoint-dir", ck,
                        "--resume", ck, "--steps", "3",
                        preexec_fn=None if mounted else limit)
        output, _ = proc.communicate()
        print(f"disk: {'tmpfs of ' + str(size * 3 // 2) + ' bytes' if mounted else 'RLIMIT_FSIZE of 4096 bytes'}")
        print(f"exit status {proc.returncode}")
        print(output.strip().splitlines()[-1])
        if proc.returncode == 0:
            fail("the run on a full disk succeeded")
        # 3. The previous checkpoint is intact.
        latest = (ck / "latest").read_text().strip()
        if latest != "step-00000001":
            fail(f"latest names {latest}, not step-00000001")
        for name in os.listdir(root / "saved" / latest):
            if not filecmp.cmp(root / "saved" / latest / name,
                               ck / latest / name, shallow=False):
                fail(f"{latest}/{name} changed")
        print(f"latest: {latest}, its files unchanged")
        # 4. It loads: the rest of the run gives the uninterrupted losses.
        resumed = root / "resumed"
        resumed.mkdir()
        shutil.copytree(ck, resumed / "ck", symlinks=True,
                        ignore=shutil.ignore_patterns(".*"))
    finally:
        if mounted:
            subprocess.run(["umount", str(disk)])
    shutil.copy(first / "metrics.jsonl", resumed / "metrics.jsonl")
    proc = llmc_run(args.artifact, resumed, "--resume", resumed / "ck")
    output, _ = proc.communicate()
    if proc.returncode != 0:
        fail(f"the resume from step 1 failed:\n{output}")
    got = steps_of(resumed / "metrics.jsonl")
    if got != expected:
        fail("the resumed run's losses differ from the uninterrupted run's")
    print(f"resumed from step 1: the losses of steps 1-{max(expected)} equal "
          "the uninterrupted run's")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    k = sub.add_parser("kill")
    k.add_argument("artifact")
    k.add_argument("workdir")
    k.add_argument("--kills", type=int, default=20)
    k.add_argument("--seed", type=int, default=27)
    f = sub.add_parser("full-disk")
    f.add_argument("artifact")
    f.add_argument("workdir")
    f.add_argument("--no-mount", action="store_true",
                   help="use the file-size limit even where tmpfs mounts")
    parser.add_argument("--llmc-run", default="llmc-run")
    args = parser.parse_args()
    global LLMC_RUN
    LLMC_RUN = args.llmc_run
    {"kill": kill, "full-disk": full_disk}[args.command](args)


if __name__ == "__main__":
    main()
