"""Where torch.compile's GPT-2 124M step spends its GPU time (issue #7).

Builds the model of ../shared/bench/torch_gpt2_bench.py (the peer bench/gpt2.sh
runs), compiles it the same way, and prints torch.profiler's CUDA time per
kernel, summed over the profiled steps and divided by their count, beside
llmc's LLMC_PROFILE table. Usage (on the GPU machine):
    python3 bench/torch_profile.py [--shared ../shared/bench] [--steps 3]
"""
import argparse
import os
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--shared", default=os.path.join(
        os.path.dirname(__file__), "..", "..", "shared", "bench"))
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--warmup", type=int, default=8)
    p.add_argument("--top", type=int, default=45)
    a = p.parse_args()
    sys.path.insert(0, os.path.abspath(a.shared))
    import torch
    import torch_gpt2_bench as peer
    from torch.profiler import ProfilerActivity, profile

    torch.manual_seed(0)
    m = peer.GPT(50304, 1024, 12, 12, 768, True).to("cuda")
    opt = torch.optim.AdamW(m.parameters(), lr=3e-4, weight_decay=0.1,
                            fused=True)
    cm = torch.compile(m)
    g = torch.Generator(device="cuda").manual_seed(1)
    b = torch.randint(0, 50304, (16, 1025), device="cuda", generator=g)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = cm(b[:, :-1], b[:, 1:])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(a.warmup):
        step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(a.steps):
            step()
        torch.cuda.synchronize()
    rows = []
    for e in prof.key_averages():
        t = getattr(e, "device_time_total", None)
        if t is None:
            t = e.cuda_time_total
        if t > 0:
            rows.append((t / a.steps / 1e3, e.count // a.steps, e.key))
    rows.sort(reverse=True)
    total = sum(r[0] for r in rows)
    print(f"torch.compile GPU time per step (mean of {a.steps}): "
          f"{total:.2f} ms")
    for ms, count, key in rows[:a.top]:
        print(f"  {ms:8.3f} ms {count:5d} x  {key[:110]}")


if __name__ == "__main__":
    main()
