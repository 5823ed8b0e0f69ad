"""Greedy held-out accuracy: one greedy completion per prompt, scored by a verifier."""

from __future__ import annotations

from typing import Callable

from rlvr.engines.base import Engine, SamplingParams
from rlvr.types import Sample

Verify = Callable[[str, str], "object"]  # (response, gold) -> Verdict with a .score


def greedy_accuracy(engine: Engine, samples: list[Sample], verify: Verify, *, max_new_tokens: int,
                    stop: tuple[str, ...] = ()) -> float:
    """Fraction of samples whose greedy completion the verifier scores 1."""
    params = SamplingParams(max_new_tokens=max_new_tokens, temperature=0.0, stop=stop)
    groups = engine.generate([s.prompt for s in samples], 1, params)
    correct = sum(verify(g[0].text, s.answer).score >= 1.0 for g, s in zip(groups, samples))
    return correct / len(samples)
