"""Joined or split projection GEMMs in the fast decode path: time and memory, one run.

    nice -n -10 python benchmarks/decode_fusion.py [--points w1,mid,g8] [--reps 5] [--threads 2] [--out FILE]

rlvr's fast Qwen2 decode (`rlvr.engines.qwen2_decode`) reads every weight in place above
`JOIN_MAX_HIDDEN` (three GEMMs for q, k, v and two for gate, up: `split`, what `Qwen2Decoder`
does without `joined`). Until 2026-12-07 it joined q|k|v and gate|up at every size, into one
GEMM each over concatenated copies of the weights, rebuilt here as a `Blocks` whose functions
use copies: `joined` makes them before the timing (an engine whose weights do not
change: `rlvr eval`, `rlvr serve`), `joined-fresh` inside each timed generation (a sync run,
whose weights change every step), `qkv-only` joins q|k|v alone. Per point, in one process: a
prefill of the prompts, expanded to their rows as `HFEngine` does, then one decode step per
new token, each fed the argmax token; the variants in turn for `--reps` rounds (after one untimed round); the
figure is each variant's median time per generation over split's, with the largest |logit
difference| from split's and the MiB the copies take.

Points: `w1` = workload 1's generation (shared/bench/WORKLOAD.md: 3.97M parameters, 8 prompts x
8 samples, 64 tokens); `mid` = vs_trl.py's 30M model (hidden 512 x 8 layers), 2 x 8 rows, 64
tokens; `g8` = vs_trl.py's g8 (103.9M: hidden 768 x 12 layers), 1 x 8 rows, 32 tokens.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from step_throughput import MODEL, make_prompts  # noqa: E402
from vs_trl import HUGE, LARGE  # noqa: E402

from rlvr.engines import qwen2_decode as qd  # noqa: E402
from rlvr.engines.hf import left_pad  # noqa: E402
from rlvr.models import build_char_tokenizer, tiny_qwen2  # noqa: E402

# name: (model shape, prompts, samples per prompt, new tokens)
POINTS = {"w1": (MODEL, 8, 8, 64), "mid": (LARGE, 2, 8, 64), "g8": (HUGE, 1, 8, 32)}


class JoinedBlocks:
    """The old path: q|k|v and gate|up concatenated once, looked up by the first weight's storage."""

    def __init__(self, model, gate_up: bool = True):
        self.qkv, self.gate_up, self.join_mlp = {}, {}, gate_up
        for layer in model.model.layers:
            a, m = layer.self_attn, layer.mlp
            bias = None if a.q_proj.bias is None else torch.cat([a.q_proj.bias, a.k_proj.bias, a.v_proj.bias])
            self.qkv[a.q_proj.weight.data_ptr()] = (torch.cat([a.q_proj.weight, a.k_proj.weight, a.v_proj.weight]), bias)
            if gate_up:
                self.gate_up[m.gate_proj.weight.data_ptr()] = torch.cat([m.gate_proj.weight, m.up_proj.weight])

    def copies_mib(self) -> float:
        tensors = [w for w, _ in self.qkv.values()] + list(self.gate_up.values())
        return sum(t.numel() * t.element_size() for t in tensors) / 2 ** 20

    def qkv_rope(self, x, ln, eps, q_w, q_b, k_w, k_b, v_w, v_b, cos, sin_signed, nq, nkv):
        w, b = self.qkv[q_w.data_ptr()]
        return qd.qkv_rope_joined(x, ln, eps, w, b, cos, sin_signed, nq, nkv)

    def mlp(self, x, ln, eps, gate_w, up_w, down_w):
        if not self.join_mlp:
            return qd.mlp(x, ln, eps, gate_w, up_w, down_w)
        return qd.mlp_joined(x, ln, eps, self.gate_up[gate_w.data_ptr()], down_w)


@torch.inference_mode()
def generation(model, ids, mask, index, tokens: int, blocks) -> tuple[float, torch.Tensor]:
    """(seconds, the logits of every step stacked) for one greedy-fed generation; `blocks` a
    callable is called inside the timed region (copies made per generation)."""
    t0 = time.perf_counter()
    if callable(blocks):
        blocks = blocks()
    decoder = qd.Qwen2Decoder(model, ids, mask, tokens, blocks)
    logits = decoder.prefill()
    decoder.expand(index)
    logits = logits[index]
    seen = [logits]
    for _ in range(tokens - 1):
        logits = decoder.step(logits.argmax(-1))
        seen.append(logits)
    return time.perf_counter() - t0, torch.stack(seen)


def run_point(name: str, reps: int) -> dict:
    shape, n_prompts, group, tokens = POINTS[name]
    torch.manual_seed(0)
    model = tiny_qwen2(**{"vocab_size": 128, **shape}).eval()
    tok = build_char_tokenizer(128)
    prompts = [tok(p, add_special_tokens=False)["input_ids"] for p, _ in make_prompts()[:n_prompts]]
    ids, mask = left_pad(prompts, 0)
    index = torch.arange(n_prompts).repeat_interleave(group)
    joined = JoinedBlocks(model)
    variants = {"split": None, "joined": joined, "joined-fresh": lambda: JoinedBlocks(model),
                "qkv-only": JoinedBlocks(model, gate_up=False)}
    times: dict[str, list[float]] = {v: [] for v in variants}
    logits = {}
    for r in range(reps + 1):
        for v, blocks in variants.items():
            dt, logits[v] = generation(model, ids, mask, index, tokens, blocks)
            if r:
                times[v].append(dt)
    med = {v: statistics.median(t) for v, t in times.items()}
    return {"rows": n_prompts * group, "tokens": tokens, "params_m": sum(p.numel() for p in model.parameters()) / 1e6,
            "median_s": med, "over_split": {v: med[v] / med["split"] for v in variants},
            "max_logit_diff": max((logits["split"] - x).abs().max().item() for x in logits.values()),
            "copies_mib": {"joined": joined.copies_mib(), "qkv-only": variants["qkv-only"].copies_mib()},
            "times": times}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", default="w1,mid,g8")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    load = [os.getloadavg()[0]]
    results = {}
    for name in args.points.split(","):
        results[name] = r = run_point(name, args.reps)
        load.append(os.getloadavg()[0])
        ratios = ", ".join(f"{v} {x:.2f}" for v, x in r["over_split"].items() if v != "split")
        print(f"{name:<4} {r['params_m']:6.1f}M  {r['rows']:3d} rows x {r['tokens']} tokens: split {r['median_s']['split']:.3f} s; "
              f"over split: {ratios}; copies: joined {r['copies_mib']['joined']:.0f} MiB, q|k|v only "
              f"{r['copies_mib']['qkv-only']:.0f} MiB; max |logit diff| {r['max_logit_diff']:.1e}", flush=True)
    print(f"load {' -> '.join(f'{x:.1f}' for x in load)}, {args.threads} threads")
    if args.out:
        Path(args.out).write_text(json.dumps({"load": load, "threads": args.threads, "points": results}, indent=1))


if __name__ == "__main__":
    main()
