"""Greedy held-out accuracy: one greedy completion per prompt, scored by a verifier."""

from __future__ import annotations

from typing import Callable

from rlvr.engines.base import Engine, SamplingParams
from rlvr.evaluate.groups import verdicts_of
from rlvr.rewards.calling import score_of
from rlvr.rewards.concurrent import SERIAL, Concurrency
from rlvr.types import Sample

Verify = Callable[..., "object"]  # a reward function (rlvr.rewards.calling) -> Verdict with a .score


def greedy_accuracy(engine: Engine, samples: list[Sample], verify: Verify, *, max_new_tokens: int,
                    stop: tuple[str, ...] = (), how: Concurrency = SERIAL) -> float:
    """Fraction of samples whose greedy completion the verifier scores 1 (the calls `how.workers`
    at once)."""
    params = SamplingParams(max_new_tokens=max_new_tokens, temperature=0.0, stop=stop)
    groups = engine.generate([s.prompt for s in samples], 1, params)
    correct = sum(score_of(v) >= 1.0 for v in verdicts_of(samples, groups, verify, how))
    return correct / len(samples)
