"""Seeded guess-the-number games as tasks: the prompt asks for a number in low .. high and the
gold answer is the secret. `env.kind = "guess_number"` plays each as a multi-turn game with
higher/lower feedback (rlvr.envs.guess_number); without an environment it is a one-shot guess.
"""

from __future__ import annotations

import random

from rlvr.errors import ConfigError
from rlvr.types import Sample


def guess_number_prompt(low: int, high: int) -> str:
    return f"Guess my number ({low}-{high}):"


def guess_number_splits(*, seed: int, train_size: int, test_size: int, low: int = 1,
                        high: int = 100) -> tuple[list[Sample], list[Sample]]:
    """(train, test): `train_size` then `test_size` games, their secrets drawn from `seed`. A
    secret may recur (there are only high - low + 1); each game is its own task."""
    if low > high:
        raise ConfigError(f"task.low ({low}) is above task.high ({high})")
    rng, prompt = random.Random(seed), guess_number_prompt(low, high)
    games = [Sample(prompt, str(rng.randint(low, high)), f"guess_number#{i}") for i in range(train_size + test_size)]
    return games[:train_size], games[train_size:]
