"""Guess the number: a deterministic seeded text game with higher/lower feedback.

The secret is the task's gold answer (`Sample.answer`), so the G episodes of one task play the
same game; `guess_number_samples` draws tasks from a seed. With an empty answer the secret is
drawn from the episode's seed. Each turn the first integer in the action is the guess:

    too low  -> "N is too low: guess higher."      reward 0 (closeness: a step reward, below)
    too high -> "N is too high: guess lower."      reward 0
    no number-> "Answer with one whole number."    reward 0 (counted in game/invalid)
    right    -> done, stop_reason "solved", reward 1

With `closeness` > 0 a wrong guess earns the step reward closeness * (1 - |guess - secret| /
(high - low)): a shaped signal for the hybrid rule and per-turn credit (rlvr.envs.credit).

Cheap (no model, no I/O), for the default test run and as the worked example of the contract.
"""

from __future__ import annotations

import random
import re

from rlvr.envs.base import Env, StepResult
from rlvr.types import Sample

_NUMBER = re.compile(r"-?\d+")


def guess_number_samples(n: int, seed: int, low: int = 1, high: int = 100) -> list[Sample]:
    """`n` games, their secrets drawn from `seed` (the same seed, the same games)."""
    rng = random.Random(seed)
    prompt = f"I am thinking of a number from {low} to {high}. Guess it: answer with one number."
    return [Sample(prompt, str(rng.randint(low, high)), f"guess_number/{seed}#{i}") for i in range(n)]


class GuessNumberEnv(Env):
    """One game; `low`..`high` bound the secret when the sample gives none (and scale the
    closeness reward)."""

    def __init__(self, low: int = 1, high: int = 100, closeness: float = 0.0):
        if low > high:
            raise ValueError(f"GuessNumberEnv needs low <= high, got {low} > {high}")
        self.low, self.high, self.closeness = low, high, closeness
        self.secret: int | None = None

    def reset(self, sample: Sample, seed: int) -> str:
        if sample.answer.strip():
            try:
                self.secret = int(sample.answer)
            except ValueError:
                raise ValueError(f"{sample.source or 'sample'}: guess-the-number answer must be an integer, "
                                 f"got {sample.answer!r}") from None
        else:
            self.secret = random.Random(seed).randint(self.low, self.high)
        return sample.prompt or f"I am thinking of a number from {self.low} to {self.high}. Guess it."

    def step(self, action: str) -> StepResult:
        found = _NUMBER.search(action)
        if found is None:
            return StepResult("Answer with one whole number.", metrics={"game/invalid": 1.0})
        guess = int(found.group())
        if guess == self.secret:
            return StepResult("", reward=1.0, done=True, stop_reason="solved", metrics={"game/solved": 1.0})
        side = "low: guess higher" if guess < self.secret else "high: guess lower"
        near = 1.0 - min(1.0, abs(guess - self.secret) / max(1, self.high - self.low))
        return StepResult(f"{guess} is too {side}.", reward=self.closeness * near, metrics={"game/guesses": 1.0})
