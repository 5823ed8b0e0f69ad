"""A seeded procedural arithmetic task with disjoint train and test splits.

Every problem `a+b=` with a, b drawn from the operand range is enumerated, shuffled with the
seed, and cut into a test split and a train split, so no problem appears in both.
"""

from __future__ import annotations

import itertools
import random

from rlvr.types import Sample


def arithmetic_splits(*, seed: int, test_size: int, low: int = 10, high: int = 99,
                      ops: str = "+") -> tuple[list[Sample], list[Sample]]:
    """(train, test) lists of `Sample("a+b=", "c")`, disjoint, deterministic from `seed`."""
    pairs = list(itertools.product(range(low, high + 1), range(low, high + 1), ops))
    if not 0 < test_size < len(pairs):
        raise ValueError(f"test_size must be in (0, {len(pairs)}), got {test_size}")
    random.Random(seed).shuffle(pairs)
    samples = [_sample(a, b, op, i) for i, (a, b, op) in enumerate(pairs)]
    test, train = samples[:test_size], samples[test_size:]
    return train, test


def _sample(a: int, b: int, op: str, index: int) -> Sample:
    value = {"+": a + b, "-": a - b, "*": a * b}[op]
    return Sample(prompt=f"{a}{op}{b}=", answer=str(value), source=f"arithmetic#{index}")
