"""The task generator an environment opts into (issue 25; docs/environments-reference.md,
"Failure curriculum").

`env.curriculum = "failures"` mines failed tasks into a pool (rlvr.envs.failures). Where the
environment has a generator, the pool's draws are not the failed rows again but fresh tasks
with the same features: a new instance of the same world template and difficulty, a new
multiplication whose first operand ends in the same digit, a new secret in the same band. So
training aims at where the policy fails without memorising the few seeds it failed on.

A generator is two functions over plain data:

    features(sample) -> {name: value}       what kind of task this row is (str values)
    generate(features, rng) -> Sample        a fresh row with those features

`generate` must return a row whose `features` equal the ones asked for (tests check it on
every shipped generator), must not return a held-out row (a generator that knows the split
avoids it), and draws all of its randomness from `rng` (a run stays reproducible).

An environment offers one by overriding `Env.task_generator` (read once per run, from one
instance, like `tool_schemas`); the built-in task kinds get theirs from
orchestrate/task_generators.py. Without a generator the pool replays the failed rows.
"""

from __future__ import annotations

import abc
import random

from rlvr.types import Sample


class TaskGenerator(abc.ABC):
    """Fresh tasks by feature (module docstring)."""

    @abc.abstractmethod
    def features(self, sample: Sample) -> dict[str, str]:
        """The features of the task `sample` makes (the same row: the same features)."""

    @abc.abstractmethod
    def generate(self, features: dict[str, str], rng: random.Random) -> Sample:
        """A fresh task with `features`; its randomness from `rng` only."""


def checked_features(generator: TaskGenerator, sample: Sample) -> dict[str, str]:
    """`generator.features(sample)`, refused with one line naming the generator when it is not
    a dict of str -> str (a user's generator)."""
    found = generator.features(sample)
    if not isinstance(found, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in found.items()):
        raise TypeError(f"{type(generator).__name__}.features must return a dict of str -> str, got {found!r:.80}")
    return found
