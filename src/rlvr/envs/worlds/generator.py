"""`WorldGenerator`: fresh world tasks by template and difficulty (rlvr.envs.generator).

A world task row only seeds its instance (env.py, `row_seed`), so a fresh row is a fresh
instance. Its `extra` names the template and the difficulty, which `WorldEnv.reset` honours
over its own draw and `env.difficulty`; so the failure pool can aim at "calendar plan_day at 3
calls" without replaying the one instance that failed.
"""

from __future__ import annotations

import hashlib
import random

from rlvr.envs.generator import TaskGenerator
from rlvr.envs.worlds.spec import TaskSpec, WorldSpec
from rlvr.types import Sample


def row_seed(sample: Sample) -> int:
    """The seed of a row's instance: a stable hash of (source, prompt, answer)."""
    digest = hashlib.sha256(f"{sample.source}\x00{sample.prompt}\x00{sample.answer}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def row_template(spec: WorldSpec, sample: Sample, rng: random.Random) -> TaskSpec:
    """The template a row plays: its `extra["template"]` when set, else a draw from `rng` (the
    row's own RNG: drawn either way, so a row without the column plays as it always did)."""
    drawn = rng.choice(spec.tasks)
    name = sample.extra.get("template")
    if name is None:
        return drawn
    for t in spec.tasks:
        if t.name == name:
            return t
    raise ValueError(f"{sample.source or 'sample'}: world {spec.name!r} has no task template {name!r} "
                     f"(it has {', '.join(t.name for t in spec.tasks)})")


def row_difficulty(sample: Sample, default: int) -> int:
    return int(sample.extra.get("difficulty", default))


class WorldGenerator(TaskGenerator):
    def __init__(self, spec: WorldSpec, difficulty: int):
        self.spec, self.difficulty = spec, difficulty

    def features(self, sample: Sample) -> dict[str, str]:
        template = row_template(self.spec, sample, random.Random(row_seed(sample)))
        return {"template": template.name, "difficulty": str(row_difficulty(sample, self.difficulty))}

    def generate(self, features: dict[str, str], rng: random.Random) -> Sample:
        n = rng.getrandbits(48)
        return Sample(f"{self.spec.name} task {n}", "", f"{self.spec.name}-fresh#{n}",
                      {"template": features["template"], "difficulty": int(features["difficulty"])})
