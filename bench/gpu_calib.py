#!/usr/bin/env python3
"""GPU calibration: llmc plan --by-op against an LLMC_PROFILE=1 log (#11).

  bench/gpu_calib.py PROFILE_LOG --toml bench/gpt2-124m.toml [--llmc PATH]
  bench/gpu_calib.py PROFILE_LOG --plan SAVED_PLAN_OUTPUT
      [--device-profile h200] [--fit] [--tolerance 0.25] [--min-ms 0.05]

Reads the profile's first table ("GPU time by kernel, per step": ms and
launches per kernel kind) and the model's kernels by op (`llmc plan
--by-op`, run here or read from a saved file), maps each profile row onto
an op row of the model (below), and prints per group the launches (measured
/ model), the measured and predicted ms per step and predicted / measured,
then the whole step (the profile's GPU time against the predicted kernels).
With --fit it also prints the efficiency of data/devices.toml
[NAME.efficiency] that would make each group agree: the current one x
(predicted - launches x launch) / (measured - launches x launch), as
`bench/cpu_meshes.py profile` does for the CPU.

Exit status 1 (--check all, the default) when a group of at least --min-ms
measured is off by more than --tolerance (|predicted / measured - 1|), when
a group's launches differ from the model's, or when a measured group has no
model row or a model row no measured group (a mapping that no longer
holds); groups under --min-ms are printed and their times not checked (a
few microseconds of launches: the launch cost's own noise). --check
launches checks only what runs (the launches and the mapping), for a model
whose times are not fitted (LLaMA 1B).

The mapping (docs/planning.md, "What the CUDA runtime runs"): a profile row
"Kind -> dtype" is the model's op snake_case(Kind), except
  Matmul, MatmulEpilogue            -> matmul (a matmul_epilogue region that
                                       is one cuBLASLt GEMM is costed as one
                                       matmul with the region's bytes)
  FusedElementwise (one kernel)     -> fused
  MultiTensor X                     -> multi_tensor_<op of X> (members of a
                                       multi-tensor launch: one launch, the
                                       members' bytes)
  LayerNormGrad, RmsNormGrad        -> layer_norm_grad, rms_norm_grad (with
                                       the residual adds the runtime folds
                                       into them, which launch nothing)
  SumSquares                        -> sum_squares (the gradient norm's
                                       mul + reduce_sum regions)

Only the Python standard library; run from anywhere.
"""
import argparse
import os
import re
import subprocess
import sys
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Profile kinds whose model op is not snake_case(kind).
SPECIAL = {
    "Matmul": "matmul",
    "MatmulEpilogue": "matmul",
    "FusedElementwise": "fused",
}

PROFILE_ROW = re.compile(
    r"^\[profile\]\s+([0-9.]+) ms\s+[0-9.]+%\s+(\d+) x\s+(.+?)\s*$")
PROFILE_TOTAL = re.compile(
    r"^\[profile\] GPU time by kernel, per step .*total ([0-9.]+) ms")
# name, kernels, launches, flops, bytes, ms (llmc plan --by-op)
PLAN_ROW = re.compile(
    r"^\s{4}(\w+)\s+(\d+)\s+(\d+)\s+\S+\s+\S+\s+([0-9.]+)$")
PLAN_STEP = re.compile(r"^\s+predicted step: ([0-9.]+) ms")


def snake(name):
    """AttentionGrad -> attention_grad (runtime kernel -> llmc op name)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def op_of(kind):
    """The model's op row for a profile kind ("MultiTensor Cast -> bf16",
    "FusedElementwise (one kernel)", "LayerNormGrad -> bf16")."""
    kind = kind.split(" -> ")[0].replace(" (one kernel)", "").strip()
    prefix = ""
    if kind.startswith("MultiTensor "):
        prefix, kind = "multi_tensor_", kind[len("MultiTensor "):]
    return prefix + SPECIAL.get(kind, snake(kind))


def read_profile(text):
    """{op: [ms, launches, {kinds}]} and the total GPU ms per step, from the
    first table of an LLMC_PROFILE=1 log."""
    rows, total, inside = {}, None, False
    for line in text.splitlines():
        m = PROFILE_TOTAL.match(line)
        if m:
            if total is not None:
                break  # a second log in the same file
            total, inside = float(m.group(1)), True
            continue
        if not inside:
            continue
        m = PROFILE_ROW.match(line)
        if not m:
            break  # the table ends (the by-part table starts)
        r = rows.setdefault(op_of(m.group(3)), [0.0, 0, set()])
        r[0] += float(m.group(1))
        r[1] += int(m.group(2))
        r[2].add(m.group(3).split(" -> ")[0])
    if total is None:
        raise SystemExit("gpu_calib: no '[profile] GPU time by kernel, per "
                         "step' table in the profile log")
    return rows, total


def read_plan(text):
    """{op: (kernels, launches, ms)} and the predicted step in ms."""
    if "by op" not in text:
        raise SystemExit("gpu_calib: no 'by op' rows in the plan; run llmc "
                         "plan with --by-op")
    rows, step = {}, None
    for line in text.split("by op", 1)[1].splitlines():
        m = PLAN_ROW.match(line)
        if m:
            rows[m.group(1)] = (int(m.group(2)), int(m.group(3)),
                                float(m.group(4)))
        m = PLAN_STEP.match(line)
        if m:
            step = float(m.group(1))
    return rows, step


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("profile_log", help="LLMC_PROFILE=1 output")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--toml", help="run llmc plan on this run description")
    source.add_argument("--plan", help="a saved `llmc plan --by-op` output")
    parser.add_argument("--llmc", default=os.path.join(ROOT, "build", "bin",
                                                       "llmc"))
    parser.add_argument("--device-profile", default="h200")
    parser.add_argument("--devices-toml",
                        default=os.path.join(ROOT, "data", "devices.toml"),
                        help="for --fit: the profile's launch_us and "
                        "efficiencies (default data/devices.toml)")
    parser.add_argument("--fit", action="store_true",
                        help="print the efficiency that makes each group "
                        "agree")
    parser.add_argument("--tolerance", type=float, default=0.25)
    parser.add_argument("--min-ms", type=float, default=0.05,
                        help="groups measured under this are not checked")
    parser.add_argument("--check", choices=["all", "launches", "none"],
                        default="all",
                        help="what fails the run: 'all' (a group off by "
                        "more than --tolerance, launches that differ, an "
                        "unmapped row), 'launches' (launches that differ, "
                        "an unmapped row: what runs, not how fast), 'none'")
    args = parser.parse_args()

    with open(args.profile_log) as f:
        measured, total = read_profile(f.read())
    if args.plan:
        with open(args.plan) as f:
            plan_text = f.read()
    else:
        proc = subprocess.run([args.llmc, "plan", args.toml, "--by-op",
                               "--device-profile", args.device_profile],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            sys.stderr.write(proc.stderr)
            raise SystemExit("gpu_calib: llmc plan failed")
        plan_text = proc.stdout
    predicted, step = read_plan(plan_text)

    launch_ms, current = 0.0, {}
    if args.fit:
        with open(args.devices_toml, "rb") as f:
            device = tomllib.load(f)[args.device_profile]
        launch_ms = device["launch_us"] * 1e-3
        current = device.get("efficiency", {})

    failed = []
    header = ("| group (model op) | profile rows | launches measured / model "
              "| measured ms | predicted ms | predicted / measured |")
    rule = "|---|---|---|---|---|---|"
    if args.fit:
        header += " efficiency now | efficiency fitted |"
        rule += "---|---|"
    print(header)
    print(rule)
    ops = sorted(set(measured) | set(predicted),
                 key=lambda op: -measured.get(op, [0.0])[0])
    for op in ops:
        ms, runs, kinds = measured.get(op, [0.0, 0, set()])
        kernels, launches, pms = predicted.get(op, (0, 0, 0.0))
        ratio = pms / ms if ms > 0 else float("inf")
        checked = ms >= args.min_ms
        off = abs(ratio - 1) > args.tolerance
        mark = ""
        if op not in predicted or op not in measured:
            mark = " (no model row)" if op not in predicted else \
                " (not in the profile)"
            if checked or op not in measured:
                failed.append(op)
        elif runs != launches:
            mark = " (launches differ)"
            failed.append(op)
        elif checked and off:
            mark = " (off)"
            if args.check == "all":
                failed.append(op)
        elif not checked:
            mark = " (not checked)"
        kernel_text = f"{launches}" + (f" ({kernels} kernels)"
                                       if kernels != launches else "")
        line = (f"| {op} | {', '.join(sorted(kinds)) or '-'} | {runs} / "
                f"{kernel_text} | {ms:.3f} | {pms:.3f} | {ratio:.2f}{mark} |")
        if args.fit:
            now = current.get(op, 1.0)
            roofline = now * (pms - launches * launch_ms)
            fitted = (roofline / (ms - launches * launch_ms)
                      if ms > launches * launch_ms and roofline > 0
                      else float("nan"))
            line += f" {now:.3g} | {fitted:.3g} |"
        print(line)
    kernels_ms = sum(p[2] for p in predicted.values())
    print(f"| whole step (GPU time) | | | {total:.3f} | {kernels_ms:.3f} | "
          f"{kernels_ms / total:.2f} |")
    if step is not None and abs(step - kernels_ms) > 0.01:
        print(f"(the plan's predicted step: {step:.3f} ms)")
    if failed and args.check != "none":
        what = (f"off by more than {args.tolerance:.0%}, "
                if args.check == "all" else "")
        print(f"gpu_calib: {what}launches that differ or unmapped: "
              f"{', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
