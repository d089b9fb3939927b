"""Summarizes a --trace file for FileCheck (test/tools/llmc-trace.mlir).

Prints the traced steps, the processes and their tracks, the host phases,
the command events per rank and whether each lies inside a host "run"
phase of its process's step, and that every command names its model part
and op. Exits 1 when the file is not a Chrome trace.
"""
import json
import sys
from collections import Counter, defaultdict


def main(path):
    with open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    other = trace.get("otherData", {})
    print("traced steps:", other.get("traced_steps", "-"))
    names = {}
    tracks = defaultdict(dict)
    for e in events:
        if e["ph"] == "M" and e["name"] == "process_name":
            names[e["pid"]] = e["args"]["name"]
        if e["ph"] == "M" and e["name"] == "thread_name":
            tracks[e["pid"]][e["tid"]] = e["args"]["name"]
    for pid in sorted(names):
        print(f"process {pid}: {names[pid]}")
        for tid in sorted(tracks[pid]):
            print(f"  track {tid}: {tracks[pid][tid]}")
    complete = [e for e in events if e["ph"] == "X"]
    for e in complete:
        assert isinstance(e["ts"], (int, float)) and e["dur"] >= 0, e
    host = [e for e in complete if e["cat"] == "host"]
    print("host phases:", ", ".join(sorted(Counter(e["name"] for e in host))))
    runs = [(e["pid"], e["ts"], e["ts"] + e["dur"]) for e in host
            if e["name"].startswith("run")]
    commands = [e for e in complete if e["cat"] != "host"]
    per_rank = Counter(e["pid"] for e in commands)
    for pid in sorted(per_rank):
        print(f"rank {pid}: {per_rank[pid]} commands")
    # Rank r's commands run inside the run phase of the process that hosts
    # it (pid 0 for the CPU's virtual ranks, which share one loop).
    hosts = {pid for pid, _, _ in runs}
    inside = all(any(b - 1 <= e["ts"] and e["ts"] + e["dur"] <= f + 1
                     for p, b, f in runs if p in hosts)
                 for e in commands)
    print("commands inside a run phase:", inside)
    print("commands name part and op:",
          # A launch may cover more than its op ("LayerNormGrad + folded
          # residual add" on the GPU, "MultiTensor Cast -> bf16").
          all(e["args"].get("part") and e["args"].get("op")
              and (e["name"].startswith(e["args"]["op"]) or "MultiTensor" in e["name"])
              for e in commands))
    ops = Counter(e["name"] for e in commands)
    print("ops include:", " ".join(op for op in ("Matmul", "all_reduce",
                                                 "AdamW") if op in ops))


if __name__ == "__main__":
    try:
        main(sys.argv[1])
    except (KeyError, ValueError, AssertionError) as error:
        print(f"{sys.argv[1]}: not a trace: {error!r}")
        sys.exit(1)
