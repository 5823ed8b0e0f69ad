"""Greedy held-out accuracy: one greedy completion per prompt, scored by a verifier."""

from __future__ import annotations

from typing import Callable

from rlvr.engines.base import Engine, SamplingParams
from rlvr.rewards.calling import call_reward_checked, score_of
from rlvr.types import Sample

Verify = Callable[..., "object"]  # a reward function (rlvr.rewards.calling) -> Verdict with a .score


def greedy_accuracy(engine: Engine, samples: list[Sample], verify: Verify, *, max_new_tokens: int,
                    stop: tuple[str, ...] = ()) -> float:
    """Fraction of samples whose greedy completion the verifier scores 1."""
    params = SamplingParams(max_new_tokens=max_new_tokens, temperature=0.0, stop=stop)
    groups = engine.generate([s.prompt for s in samples], 1, params)
    correct = sum(score_of(call_reward_checked(verify, g[0].text, s.answer, s.prompt, s.extra, f"sample {s.source}")) >= 1.0
                  for g, s in zip(groups, samples))
    return correct / len(samples)
