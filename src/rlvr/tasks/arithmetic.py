"""A seeded procedural arithmetic task with disjoint train and test splits.

Every problem `a+b=` with a, b drawn from the operand range is enumerated, shuffled with the
seed, and cut into a test split and a train split, so no problem appears in both.
"""

from __future__ import annotations

import itertools
import random

from rlvr.errors import ConfigError
from rlvr.types import Sample

OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}


def arithmetic_splits(*, seed: int, test_size: int, low: int = 10, high: int = 99,
                      ops: str = "+") -> tuple[list[Sample], list[Sample]]:
    """(train, test) lists of `Sample("a+b=", "c")`, disjoint, deterministic from `seed`."""
    if not ops or set(ops) - set(OPS) or len(set(ops)) != len(ops):
        raise ConfigError(f"task.ops = {ops!r}: use some of '+', '-', '*', each at most once")
    count = max(high - low + 1, 0) ** 2 * len(ops)
    if not 0 < test_size < count:
        raise ConfigError(f"task.test_size = {test_size}: the operands {low} .. {high} with ops {ops!r} give "
                          f"{count} problems, so test_size must lie in 1 .. {count - 1}")
    pairs = list(itertools.product(range(low, high + 1), range(low, high + 1), ops))
    random.Random(seed).shuffle(pairs)
    samples = [_sample(a, b, op, i) for i, (a, b, op) in enumerate(pairs)]
    test, train = samples[:test_size], samples[test_size:]
    return train, test


def _sample(a: int, b: int, op: str, index: int) -> Sample:
    value = OPS[op](a, b)
    return Sample(prompt=f"{a}{op}{b}=", answer=str(value), source=f"arithmetic#{index}")
