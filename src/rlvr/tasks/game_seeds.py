"""Game seeds as tasks: for an environment whose game is fixed by a seed (env.kind =
"textarena"), a task is one seed, stored as the sample's gold answer; the G episodes of the
task then play the same game, so their group-relative advantages compare like with like.
"""

from __future__ import annotations

import random

from rlvr.types import Sample

_SEED_SPACE = 2**31 - 1


def game_seed_splits(*, seed: int, train_size: int, test_size: int,
                     name: str) -> tuple[list[Sample], list[Sample]]:
    """(train, test): `train_size` then `test_size` distinct game seeds drawn from `seed`, so
    no training seed is a held-out one. The prompt is only a label: the game writes the
    first observation."""
    seeds = random.Random(seed).sample(range(_SEED_SPACE), train_size + test_size)
    rows = [Sample(f"{name} game {s}", str(s), f"{name}#{i}") for i, s in enumerate(seeds)]
    return rows[:train_size], rows[train_size:]
