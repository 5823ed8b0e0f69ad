"""docs/environments.md's example: reverse a word, three tries, a hint after each miss."""

import random

from rlvr.engines.base import SamplingParams
from rlvr.envs import Env, EpisodeLimits, EpisodeRunner, StepResult, renderer_for
from rlvr.types import Sample

WORDS = ["cat", "spoon", "rocket", "lantern"]


class ReverseEnv(Env):
    def reset(self, sample: Sample, seed: int) -> str:
        self.word = sample.answer or random.Random(seed).choice(WORDS)
        return f"Write '{self.word}' backwards."

    def step(self, action: str) -> StepResult:
        if action.strip() == self.word[::-1]:
            return StepResult("", reward=1.0, done=True, stop_reason="reversed")
        hint = f"No. It starts with '{self.word[-1]}'. Try again."
        return StepResult(hint, metrics={"reverse/misses": 1.0})


def play(engine, tokenizer, n: int = 4) -> list:
    """n episodes at once on `engine` (one with generate_ids, e.g. HFEngine)."""
    with EpisodeRunner(engine, renderer_for(tokenizer), SamplingParams(max_new_tokens=16),
                       EpisodeLimits(max_turns=3, max_total_tokens=256)) as runner:
        return runner.run(ReverseEnv, [Sample("", "")] * n, seeds=list(range(n)))
