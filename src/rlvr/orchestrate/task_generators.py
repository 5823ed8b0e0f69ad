"""The task generators of the built-in task kinds (rlvr.envs.generator), for the failure
curriculum's fresh tasks: `task_generator(config)` is the one of the run's [task], or None.

- arithmetic (`a op b =`, as python_tool plays it): features `op` and `a_last`, the first
  operand's last digit (the tool-use model's behaviour depends on it: models/tiny-tool's
  card); a fresh problem keeps both and draws the rest, never a held-out problem.
- guess_number: feature `band`, which quarter of low..high the secret lies in; a fresh game
  draws a secret from the same band. The secrets of the train and test splits already
  overlap (tasks/guess_number.py), so a fresh game adds no new leak.

Environments with their own generator (the worlds, a user's Env) give it by
`Env.task_generator`; orchestrate/env_choice.py asks the environment first.
"""

from __future__ import annotations

import random
import re

from rlvr.config import Config
from rlvr.envs.generator import TaskGenerator
from rlvr.tasks.arithmetic import OPS, arithmetic_splits
from rlvr.tasks.guess_number import guess_number_prompt
from rlvr.types import Sample

_PROBLEM = re.compile(r"^(-?\d+)([+\-*])(-?\d+)=$")
BANDS = 4
TRIES = 1000  # draws before a generator gives up on features it cannot meet outside the held-out split


class ArithmeticGenerator(TaskGenerator):
    def __init__(self, low: int, high: int, held_out: set[str]):
        self.low, self.high, self.held_out = low, high, held_out

    def features(self, sample: Sample) -> dict[str, str]:
        found = _PROBLEM.match(sample.prompt)
        if found is None:
            raise ValueError(f"{sample.source or 'sample'}: {sample.prompt!r} is not an 'a op b =' problem")
        return {"op": found.group(2), "a_last": str(abs(int(found.group(1))) % 10)}

    def generate(self, features: dict[str, str], rng: random.Random) -> Sample:
        op, last = features["op"], int(features["a_last"])
        firsts = [a for a in range(self.low, self.high + 1) if abs(a) % 10 == last]
        for _ in range(TRIES if firsts else 0):
            a, b = rng.choice(firsts), rng.randint(self.low, self.high)
            if (prompt := f"{a}{op}{b}=") not in self.held_out:
                return Sample(prompt, str(OPS[op](a, b)), f"arithmetic-fresh#{a}{op}{b}")
        raise ValueError(f"no problem with {features} outside the held-out split (operands {self.low}..{self.high})")


class GuessNumberGenerator(TaskGenerator):
    def __init__(self, low: int, high: int):
        self.low, self.high = low, high

    def band_of(self, secret: int) -> int:
        return min(BANDS - 1, (secret - self.low) * BANDS // (self.high - self.low + 1))

    def features(self, sample: Sample) -> dict[str, str]:
        return {"band": str(self.band_of(int(sample.answer)))}

    def generate(self, features: dict[str, str], rng: random.Random) -> Sample:
        band = int(features["band"])
        secrets = [s for s in range(self.low, self.high + 1) if self.band_of(s) == band]
        secret = rng.choice(secrets)
        return Sample(guess_number_prompt(self.low, self.high), str(secret),
                      f"guess_number-fresh#{rng.getrandbits(48)}")


def task_generator(config: Config) -> TaskGenerator | None:
    """The generator of config.task's kind, or None (then the pool replays failed rows)."""
    t = config.task
    if t.kind == "arithmetic":
        held_out = {s.prompt for s in arithmetic_splits(seed=t.seed, test_size=t.test_size, low=t.low,
                                                        high=t.high, ops=t.ops)[1]}
        return ArithmeticGenerator(t.low, t.high, held_out)
    if t.kind == "guess_number":
        return GuessNumberGenerator(t.low, t.high)
    return None


def run_generator(config: Config, make_env) -> TaskGenerator | None:
    """A run's generator: its environment's own (`Env.task_generator`, e.g. a world's), else
    its task kind's, else None."""
    own = make_env().task_generator()
    return own if own is not None else task_generator(config)
