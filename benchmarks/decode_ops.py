"""A decode step of workload 1 op by op: what each op costs in the loop and alone on its shapes.

    nice -n -10 python benchmarks/decode_ops.py [--steps 60] [--reps 300] [--policies PASSIVE,ACTIVE] [--out FILE]

The step is `rlvr.engines.qwen2_decode.Qwen2Decoder.step` on the generation of
`arith64-tinyqwen2-g8-v1` (shared/bench/WORKLOAD.md): 8 prompts of 22 tokens prefilled once and
expanded to 64 rows (as `HFEngine` does), then one new token per row with 22 + 32 positions in
the cache (the middle of the completion; the step is re-run at that position, the cache
column rewritten). For each OpenMP wait policy, in a fresh process with 2 threads:

- the step itself, median of `--reps` calls;
- the step under torch.profiler (`--steps` calls): each aten op's self time per call, by
  input shapes (the profiler slows small ops, so these sum to more than the step);
- the GEMMs and the attention alone, on tensors of the shapes and layouts the profiler
  recorded (a transposed weight view as `F.linear` passes it, K/V as slices of a longer
  cache), at 2 threads and at 1: GFLOP/s beside `step_throughput.py`'s floor rate, a
  2048 x 2048 x 1024 `torch.mm` timed in the same process;
- other kernels for the same ops: `x @ W.T` with W.T made contiguous, MKL's packed sgemm
  (`torch.ops.mkl._mkl_linear`, what inductor's CPU freezing uses), attention as
  baddbmm + softmax + bmm, `F.rms_norm` against the written-out RMSNorm the path uses.

The summary line per policy: step ms; the GEMMs' time in the step at their isolated rate
(best thread count each) against the same FLOPs at the 2048 mm rate; what share of the step
the isolated GEMMs + attention account for.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MID = 32  # new tokens already in the cache when the step is timed


def timed(fn, reps: int) -> float:
    """Median seconds of fn() over 5 blocks of reps // 5 calls, after 10 warm-up calls."""
    for _ in range(10):
        fn()
    per_block = max(reps // 5, 1)
    blocks = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(per_block):
            fn()
        blocks.append((time.perf_counter() - t0) / per_block)
    return statistics.median(blocks)


def decoder_at_mid():
    """(decoder, feed tokens) with MID new tokens in the cache, rows as HFEngine makes them."""
    import torch

    sys.path.insert(0, str(HERE))
    from step_throughput import GROUP, MODEL, NEW_TOKENS, PROMPTS_PER_STEP, make_prompts

    from rlvr.engines import qwen2_decode
    from rlvr.engines.hf import left_pad
    from rlvr.models import build_char_tokenizer, tiny_qwen2

    model, tok = tiny_qwen2(**MODEL).eval(), build_char_tokenizer(128)
    prompts = [tok(p, add_special_tokens=False)["input_ids"] for p, _ in make_prompts()[:PROMPTS_PER_STEP]]
    ids, mask = left_pad(prompts, 0)
    decoder = qwen2_decode.Qwen2Decoder(model, ids, mask, NEW_TOKENS)
    gen = torch.Generator().manual_seed(0)
    with torch.inference_mode():
        decoder.prefill()
        decoder.expand(torch.arange(PROMPTS_PER_STEP).repeat_interleave(GROUP))
        feed = torch.randint(2, 98, (PROMPTS_PER_STEP * GROUP,), generator=gen)
        for _ in range(MID):
            decoder.step(feed)
    return decoder, feed


def gemm_flops(key: str, shapes) -> float | None:
    if key == "aten::mm":
        (m, k), (_, n) = shapes[0], shapes[1]
    elif key == "aten::addmm":
        (m, k), (_, n) = shapes[1], shapes[2]
    else:
        return None
    return 2.0 * m * k * n


def rebuild(key: str, shapes, cache_len: int):
    """Random tensors of a profiled op's shapes and layout, and the call that runs it."""
    import torch
    import torch.nn.functional as F

    g = torch.Generator().manual_seed(1)
    if key in ("aten::mm", "aten::addmm"):
        x_shape, w_shape = (shapes[0], shapes[1]) if key == "aten::mm" else (shapes[1], shapes[2])
        x = torch.randn(*x_shape, generator=g)
        w = torch.randn(w_shape[1], w_shape[0], generator=g)  # (N, K): F.linear passes w.t()
        b = torch.randn(w_shape[1], generator=g) if key == "aten::addmm" else None
        return {"F.linear": lambda: F.linear(x, w, b),
                "x @ W.T contiguous": (lambda wt: lambda: torch.addmm(b, x, wt) if b is not None else x @ wt)(w.t().contiguous()),
                "MKL packed": (lambda wp: lambda: torch.ops.mkl._mkl_linear(x, wp, w, b, x.shape[0]))(
                    torch.ops.mkl._mkl_reorder_linear_weight(w, x.shape[0]))}
    if key == "aten::scaled_dot_product_attention":
        q_shape, k_shape = shapes[0], shapes[1]
        b_, kv, n, hd = k_shape
        q = torch.randn(*q_shape, generator=g)
        k_all = torch.randn(b_, kv, cache_len, hd, generator=g)
        v_all = torch.randn(b_, kv, cache_len, hd, generator=g)
        k, v = k_all[:, :, :n], v_all[:, :, :n]
        bias = torch.zeros(b_, 1, 1, n)
        scale = hd ** -0.5

        def by_bmm():
            qq = q.reshape(b_ * kv, q_shape[2], hd)
            s = torch.baddbmm(bias.expand(b_, kv, q_shape[2], n).reshape(b_ * kv, q_shape[2], n),
                              qq, k.reshape(b_ * kv, n, hd).transpose(1, 2), alpha=scale)
            return torch.bmm(torch.softmax(s, -1), v.reshape(b_ * kv, n, hd))

        return {"SDPA": lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=bias, scale=scale),
                "baddbmm + softmax + bmm": by_bmm}
    return None


def bandwidth_gbs(mib: int = 64) -> float:
    """GB/s of a `copy_` between two tensors much larger than the caches (bytes read + written)."""
    import torch

    src, dst = torch.randn(mib << 18), torch.empty(mib << 18)
    return 2 * src.numel() * 4 / timed(lambda: dst.copy_(src), 25) / 1e9


def step_bytes(decoder) -> float:
    """Bytes a decode step must read at least: every layer weight and the head once, and each
    layer's cached K and V up to the current position."""
    weights = sum(p.numel() * p.element_size() for p in decoder.model.model.layers.parameters())
    head = decoder.model.get_output_embeddings().weight
    cache = sum(2 * k[:, :, :decoder.filled + 1].numel() * k.element_size() for k in decoder.k_cache)
    return weights + head.numel() * head.element_size() + cache


def step_flops(decoder) -> float:
    cfg = decoder.model.config
    sys.path.insert(0, str(HERE))
    from step_throughput import step_flops as workload_flops

    rows, n = decoder.ids.shape[0], decoder.filled + 1
    # one token at position n: the linear FLOPs of a 1-token forward plus attention over n keys
    one = workload_flops(cfg, 1, 1, rows)["generation"]
    return one + rows * 2 * 2 * cfg.num_hidden_layers * cfg.num_attention_heads * cfg.head_dim * (n - 1)


def attention_by_bmm(self, qkv, i: int, start: int, end: int, attn_mask):
    """A candidate for `Qwen2Decoder._attention` at one new token: scores by bmm over
    (row, KV head) pairs, the additive mask, softmax, bmm (the path's SDPA otherwise)."""
    import torch

    q_new, k_new, v_new = qkv
    b, s = q_new.shape[:2]
    if s != 1:
        return ORIGINAL_ATTENTION(self, qkv, i, start, end, attn_mask)
    nq, nkv, hd = self.heads, self.kv_heads, self.head_dim
    k_all, v_all = self.k_cache[i], self.v_cache[i]
    k_all[:, :, start:end] = k_new.transpose(1, 2)
    v_all[:, :, start:end] = v_new.transpose(1, 2)
    g = nq // nkv
    scores = torch.bmm(q_new[:, 0].reshape(b * nkv, g, hd), k_all[:, :, :end].reshape(b * nkv, end, hd).transpose(1, 2))
    scores = scores.mul_(self.scale).view(b, nkv, g, end).add_(attn_mask)
    probs = torch.softmax(scores, dim=-1).view(b * nkv, g, end)
    return torch.bmm(probs, v_all[:, :, :end].reshape(b * nkv, end, hd)).reshape(b, 1, nq * hd)


ORIGINAL_ATTENTION = None


def in_loop_ab(pairs: int) -> dict:
    """The whole generation's decode loop (63 steps after the prefill), the path's attention
    against `attention_by_bmm`, interleaved; logits of both compared on the first pair."""
    global ORIGINAL_ATTENTION
    import torch

    from rlvr.engines import qwen2_decode

    ORIGINAL_ATTENTION = qwen2_decode.Qwen2Decoder._attention
    sides = {"SDPA (the path's)": ORIGINAL_ATTENTION, "bmm + softmax + bmm": attention_by_bmm}

    def loop():
        decoder, feed = decoder_at_mid()  # fresh; the MID steps already run are not timed
        with torch.inference_mode():
            t0, out = time.perf_counter(), []
            for _ in range(decoder.k_cache[0].shape[2] - decoder.filled):
                out.append(decoder.step(feed))
                feed = out[-1].argmax(-1)
            return time.perf_counter() - t0, torch.stack(out)

    times = {name: [] for name in sides}
    logits = {}
    try:
        for _ in range(pairs):
            for name, fn in sides.items():
                qwen2_decode.Qwen2Decoder._attention = fn
                t, logits[name] = loop()
                times[name].append(t)
    finally:
        qwen2_decode.Qwen2Decoder._attention = ORIGINAL_ATTENTION
    base, other = (logits[n] for n in sides)
    return {"times": times, "max_abs_dlogit": float((base - other).abs().max()),
            "same_argmax": bool(torch.equal(base.argmax(-1), other.argmax(-1)))}


def norms(rows: int, dim: int):
    import torch
    import torch.nn.functional as F

    from rlvr.engines.qwen2_decode import rms_norm

    x, w = torch.randn(rows, 1, dim), torch.randn(dim)
    return {"written-out RMSNorm (the path's)": lambda: rms_norm(x, w, 1e-6),
            "F.rms_norm": lambda: F.rms_norm(x, (dim,), w, 1e-6)}


def worker(steps: int, reps: int, ab_pairs: int) -> dict:
    import torch
    from torch.profiler import ProfilerActivity, profile

    sys.path.insert(0, str(HERE))
    from step_throughput import mm_rates

    torch.set_num_threads(2)
    decoder, feed = decoder_at_mid()
    position = decoder.filled

    def step():
        decoder.filled = position  # the same column rewritten: the same work every call
        return decoder.step(feed)

    with torch.inference_mode():
        step_s = timed(step, reps)
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            for _ in range(steps):
                step()
        ops = []
        for e in prof.key_averages(group_by_input_shape=True):
            if not e.key.startswith("aten::"):
                continue
            ops.append({"op": e.key, "shapes": e.input_shapes, "per_step": e.count / steps,
                        "in_loop_us": e.self_cpu_time_total / e.count})
        ops.sort(key=lambda o: -o["in_loop_us"] * o["per_step"])
        alone = []
        for o in ops:
            shapes = [s for s in o["shapes"] if s]
            kernels = rebuild(o["op"], shapes, decoder.k_cache[0].shape[2]) if o["per_step"] >= 1 else None
            if kernels is None:
                continue
            row = {**o, "flops": gemm_flops(o["op"], shapes), "kernels": {}}
            for name, fn in kernels.items():
                row["kernels"][name] = {}
                for threads in (2, 1):
                    torch.set_num_threads(threads)
                    row["kernels"][name][str(threads)] = timed(fn, reps) * 1e6
                torch.set_num_threads(2)
            alone.append(row)
        norm = {name: {str(t): (torch.set_num_threads(t), timed(fn, reps) * 1e6)[1] for t in (2, 1)}
                for name, fn in norms(feed.shape[0], decoder.model.config.hidden_size).items()}
        torch.set_num_threads(2)
    mm = statistics.median(mm_rates(9))
    return {"step_ms": step_s * 1e3, "mm_2048_gflops": mm, "ops": ops[:25], "ops_all": ops,
            "bandwidth_gbs": bandwidth_gbs(), "step_bytes": step_bytes(decoder), "step_flops": step_flops(decoder),
            "ab": in_loop_ab(ab_pairs) if ab_pairs else None, "load_after": os.getloadavg(), "alone": alone, "norms": norm,
            "load": os.getloadavg()}


def summary(policy: str, r: dict) -> list[str]:
    lines = [f"\n== OMP_WAIT_POLICY={policy}: decode step {r['step_ms']:.2f} ms (64 rows, {22 + MID} cached "
             f"positions); 2048 mm {r['mm_2048_gflops']:.0f} GFLOP/s; load {r['load'][0]:.2f} =="]
    lines.append(f"{'op':44s} {'per step':>8s} {'in loop us':>10s} {'kernel':26s} "
                 f"{'2 thr us':>9s} {'1 thr us':>9s} {'GFLOP/s (best)':>14s}")
    gemm_best = gemm_at_mm = other_best = 0.0
    for row in r["alone"]:
        label = f"{row['op'].removeprefix('aten::')} {row['shapes'][:2]}"[:44]
        for i, (name, t) in enumerate(row["kernels"].items()):
            best = min(t.values())
            rate = "" if row["flops"] is None else f"{row['flops'] / best / 1e3:.0f}"
            calls, in_loop = (f"{row['per_step']:g}", f"{row['in_loop_us']:.1f}") if i == 0 else ("", "")
            lines.append(f"{label if i == 0 else '':44s} {calls:>8s} {in_loop:>10s} {name:26s} "
                         f"{t['2']:9.1f} {t['1']:9.1f} {rate:>14s}")
        first = min(next(iter(row["kernels"].values())).values())  # the path's own kernel, best thread count
        if row["flops"] is not None:
            gemm_best += first * row["per_step"]
            gemm_at_mm += row["flops"] / (r["mm_2048_gflops"] * 1e3) * row["per_step"]
        else:
            other_best += first * row["per_step"]
    for name, t in r["norms"].items():
        lines.append(f"{'RMSNorm (64, 1, 256)':44s} {'':>8s} {'':>10s} {name[:26]:26s} {t['2']:9.1f} {t['1']:9.1f}")
    step_us = r["step_ms"] * 1e3
    in_loop = sum(o["in_loop_us"] * o["per_step"] for o in r["ops_all"])
    lines.append(f"in the loop (profiler self time, all aten ops): {in_loop / 1e3:.2f} ms a step; the top ops:")
    for o in r["ops"][:12]:
        lines.append(f"  {o['in_loop_us'] * o['per_step'] / 1e3:6.3f} ms  {o['per_step']:4g} x {o['in_loop_us']:7.1f} us  "
                     f"{o['op'].removeprefix('aten::')} {[s for s in o['shapes'] if s][:3]}"[:118])
    lines.append(f"GEMMs alone (the path's kernels, best thread count): {gemm_best / 1e3:.2f} ms a step "
                 f"({gemm_best / step_us:.0%} of the step); the same FLOPs at the 2048 mm rate: "
                 f"{gemm_at_mm / 1e3:.2f} ms ({gemm_best / gemm_at_mm:.2f}x)")
    lines.append(f"attention alone: {other_best / 1e3:.2f} ms a step ({other_best / step_us:.0%}); "
                 f"GEMMs + attention alone: {(gemm_best + other_best) / step_us:.0%} of the step")
    flop_ms = r["step_flops"] / (r["mm_2048_gflops"] * 1e9) * 1e3
    byte_ms = r["step_bytes"] / (r["bandwidth_gbs"] * 1e9) * 1e3
    lines.append(f"roofline: {r['step_flops'] / 1e9:.3f} GFLOP at the 2048 mm rate = {flop_ms:.2f} ms; "
                 f"{r['step_bytes'] / 2**20:.1f} MiB (weights + K/V read) at {r['bandwidth_gbs']:.1f} GB/s (copy_) = "
                 f"{byte_ms:.2f} ms; the step is {r['step_ms'] / max(flop_ms, byte_ms):.2f}x the larger")
    if r.get("ab"):
        t = r["ab"]["times"]
        (a_name, a), (b_name, b) = t.items()
        ratio = statistics.median(b) / statistics.median(a)
        lines.append(f"in the loop ({len(a)} interleaved pairs of the remaining decode steps): {b_name} / {a_name} = "
                     f"{ratio:.3f} (per pair {', '.join(f'{y / x:.2f}' for x, y in zip(a, b))}); "
                     f"max |dlogit| {r['ab']['max_abs_dlogit']:.1e}, same argmax: {r['ab']['same_argmax']}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=60, help="profiled steps")
    ap.add_argument("--reps", type=int, default=300, help="calls per timing (5 blocks)")
    ap.add_argument("--policies", default="PASSIVE,ACTIVE")
    ap.add_argument("--ab-pairs", type=int, default=7, help="interleaved pairs of the in-loop attention A/B (0: none)")
    ap.add_argument("--out", help="write the results as JSON to this file")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.steps, args.reps, args.ab_pairs)))
        return
    results = {}
    for policy in args.policies.split(","):
        env = {**os.environ, "OMP_WAIT_POLICY": policy}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE.parent / "src"), env.get("PYTHONPATH")]))
        out = subprocess.run([sys.executable, __file__, "--worker", "--steps", str(args.steps), "--reps", str(args.reps),
                              "--ab-pairs", str(args.ab_pairs)],
                             env=env, capture_output=True, text=True, check=False)
        if out.returncode != 0:
            sys.exit(f"decode_ops: the {policy} worker failed:\n{out.stderr[-3000:]}")
        results[policy] = json.loads(out.stdout.strip().splitlines()[-1])
        print("\n".join(summary(policy, results[policy])), flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
