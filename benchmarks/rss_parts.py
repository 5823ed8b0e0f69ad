"""Where rlvr's peak RSS above TRL's goes at V = 128: the in-process engine's own memory.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/rss_parts.py [--model large|small] [--rows 16] [--tokens 64]
        [--engine view|copy]

TRL samples with the model it trains. Since 2026-12-04 a sync rlvr run does too
(`--engine view`, `rlvr.train.lora.engine_view`); async runs, FSDP and gradient checkpointing
give `HFEngine` a copy (`--engine copy`, `engine_copy`), so that training never changes the
sampler's weights mid-generation. The fast decode path reads the parameters in place for
layers wider than 256 (since 2026-12-07); narrower ones keep q|k|v and gate|up concatenated
(`qwen2_decode.JoinedWeights`); each generation preallocates a K/V cache.
This script builds vs_trl.py's grid model and reports VmRSS / VmHWM (from /proc/self/status)
after each of those parts, with the byte counts they should take, so the excess in vs_trl.py's
table can be read against them.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))


def status_mib() -> tuple[float, float]:
    """(VmRSS, VmHWM) of this process in MiB."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return tuple(int(fields[k].split()[0]) / 1024 for k in ("VmRSS", "VmHWM"))


def tensor_mib(tensors) -> float:
    return sum(t.numel() * t.element_size() for t in tensors) / 2**20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=("small", "large"), default="large", help="vs_trl.py's SMALL (4M) or LARGE (30M)")
    ap.add_argument("--rows", type=int, default=16, help="completions sampled (vs_trl g5: 2 prompts x 8)")
    ap.add_argument("--tokens", type=int, default=64, help="new tokens per completion")
    ap.add_argument("--engine", choices=("view", "copy"), default="view",
                    help="the engine samples with the trained model (sync runs) or a copy (async runs)")
    args = ap.parse_args()
    torch.set_num_threads(2)
    from vs_trl import LARGE, SMALL

    from rlvr.engines import HFEngine, SamplingParams
    from rlvr.models import build_char_tokenizer, tiny_qwen2
    from rlvr.train.lora import engine_copy, engine_view

    report = [("after import", *status_mib(), 0.0)]
    model = tiny_qwen2(**{**(LARGE if args.model == "large" else SMALL), "vocab_size": 128, "seed": 20240601})
    report.append(("trained model built", *status_mib(), tensor_mib(model.parameters())))
    sampler = engine_copy(model) if args.engine == "copy" else engine_view(model)
    engine = HFEngine(sampler, build_char_tokenizer(128), seed=0)
    copied = tensor_mib(engine.model.parameters()) if sampler is not model else 0.0
    report.append((f"engine built ({args.engine})", *status_mib(), copied))
    params = SamplingParams(temperature=1.0, max_new_tokens=args.tokens, min_new_tokens=args.tokens)
    prompts = ["What is 12+34? Answer:"] * (args.rows // 8)
    engine.generate(prompts, 8, params)
    joined = engine._joined.layers() if engine._joined is not None else []
    joined_mib = tensor_mib([t for w in joined for t in (w.qkv_w, w.gate_up_w)])
    del joined
    report.append(("after one generate (joined weights; K/V cache freed)", *status_mib(), joined_mib))
    engine.generate(prompts, 8, params)
    report.append(("after a second generate", *status_mib(), 0.0))
    print(f"{args.model} model, {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M parameters, "
          f"{args.rows} rows x {args.tokens} tokens; load {os.getloadavg()[0]:.1f}")
    print(f"{'point':<50} {'VmRSS':>8} {'VmHWM':>8} {'tensors (MiB)':>14}")
    for name, rss, hwm, mib in report:
        print(f"{name:<50} {rss:>8.0f} {hwm:>8.0f} {mib:>14.1f}")


if __name__ == "__main__":
    main()
