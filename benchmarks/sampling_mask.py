"""Sampling-mask replay, measured: how far the trainer's log-probs sit from the engine's with
and without replay under top-p, and what the replay costs in the LM head.

    PYTHONPATH=src python benchmarks/sampling_mask.py [--rows 512] [--vocab 151936]

1. The shipped tiny model, in-process engine, 32 rollouts x 12 tokens at top_p 0.7 and 0.9:
   max |log pi_trainer - log mu_engine| with replay and without (the engine then reports the
   truncated distribution's log-probs as it does under replay, so "without" is what the ratio
   would see if the trainer ignored the set), the mean on-policy ratio pi / mu, and the mean
   kept-set size.
2. `_head_stats` forward + backward on random hidden states through a (H, V) head, with and
   without kept sets: the time ratio of replay to the plain head.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

import torch

from rlvr.engines import HFEngine, SamplingParams
from rlvr.engines.loading import load_model, load_tokenizer
from rlvr.train.batching import collate
from rlvr.train.logprobs import _head_stats, batch_logprobs

TINY = Path(__file__).resolve().parents[1] / "models" / "tiny-arith"


def gap(top_p: float) -> dict[str, float]:
    model, tokenizer = load_model(TINY), load_tokenizer(TINY)
    engine = HFEngine(model, tokenizer, seed=0)
    params = SamplingParams(max_new_tokens=12, top_p=top_p, replay_support=True)
    rollouts = [r for g in engine.generate(["12+34=", "7+80=", "99+99=", "5+5="], 8, params) for r in g]
    batch = collate(rollouts, torch.zeros(len(rollouts)), torch.zeros(len(rollouts), dtype=torch.long), engine.pad_id)
    mask = batch.completion_mask.bool()
    with torch.no_grad():
        replay = batch_logprobs(model, batch)
        plain = batch_logprobs(model, dataclasses.replace(batch, support=None))
    return {"top_p": top_p, "max_gap_replay": float((replay - batch.old_logp)[mask].abs().max()),
            "max_gap_plain": float((plain - batch.old_logp)[mask].abs().max()),
            "ratio_mean_plain": float((plain - batch.old_logp)[mask].exp().mean()),
            "ratio_mean_replay": float((replay - batch.old_logp)[mask].exp().mean()),
            "kept_mean": float(batch.support[mask].float().mean())}


def head_cost(rows: int, vocab: int, hidden: int = 896, repeats: int = 3) -> dict[str, float]:
    torch.manual_seed(0)
    head = torch.nn.Linear(hidden, vocab, bias=False)
    x = torch.randn(rows, hidden)
    targets = torch.randint(0, vocab, (rows,))
    support = torch.randint(1, 64, (rows,))
    times = {}
    for name, k in (("plain", None), ("replay", support)):
        best = float("inf")
        for _ in range(repeats):
            head.zero_grad()
            t0 = time.perf_counter()
            logp, _ = _head_stats(head, x, targets, 1.0, None, k)
            logp.sum().backward()
            best = min(best, time.perf_counter() - t0)
        times[name] = best
    return {"rows": rows, "vocab": vocab, "plain_s": times["plain"], "replay_s": times["replay"],
            "ratio": times["replay"] / times["plain"]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=128)
    parser.add_argument("--vocab", type=int, default=151936)
    args = parser.parse_args()
    torch.set_num_threads(2)
    for top_p in (0.7, 0.9):
        print(gap(top_p))
    print(head_cost(args.rows, args.vocab))


if __name__ == "__main__":
    main()
