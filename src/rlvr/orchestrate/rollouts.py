"""Where a step's scored groups come from: draw prompts, generate G completions each, score
them, and apply dynamic sampling and the curriculum (orchestrate/dynamic_sampling.py).

Every producer (orchestrate/producers.py) draws its batches from one `RolloutSource`; the
source's state (data position, the engine's sampling RNG, the curriculum) is what a checkpoint
must hold to draw the next batch exactly as the run would have.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from typing import Protocol

from rlvr.algo.curriculum import PassRateTracker
from rlvr.config.schema import Config
from rlvr.errors import ConfigError
from rlvr.orchestrate.dynamic_sampling import select_groups, update_curriculum
from rlvr.orchestrate.parts import Parts
from rlvr.orchestrate.scoring import concurrency_of, score_groups
from rlvr.orchestrate.watchdog import Watchdog
from rlvr.tasks import PromptSampler
from rlvr.types import Rollout, Scored


@dataclass
class Produced:
    """A scored batch of groups, with how long it took and the oldest weights behind it.

    `wait_s` is what the trainer spent waiting for it: generation and scoring when the two
    run one after the other, the time blocked on the producer when they overlap."""

    groups: list[list[Scored]]
    counts: Counter
    generate_s: float
    score_s: float
    policy_version: int
    wait_s: float = 0.0


class Source(Protocol):
    """What a producer draws from: `RolloutSource` (single-turn) or `EpisodeSource`
    (environments, orchestrate/episode_source.py); plan.py's `SOURCES` picks one."""

    def draw(self, step: int) -> Produced: ...

    def state(self) -> dict: ...

    def load_state(self, state: dict, checkpoint) -> None: ...

    def close(self) -> None: ...


class RolloutSource:
    """Prompts → scored groups, with the state that makes the next draw reproducible."""

    def __init__(self, config: Config, parts: Parts, watchdog: Watchdog):
        self.config, self.parts, self.watchdog = config, parts, watchdog
        s = config.sampling
        self.sampler = PromptSampler(parts.train_set, seed=config.run.seed)
        self.curriculum = PassRateTracker(threshold=s.retire_at) if s.curriculum != "none" else None

    def state(self) -> dict:
        """What must be restored to draw the next batch exactly as this run would have."""
        state = {"sampler": self.sampler.state(), "engine_rng": self.parts.engine.generator.get_state()}
        if self.curriculum is not None:
            state["curriculum"] = self.curriculum.state_dict()
        return state

    def load_state(self, state: dict, checkpoint) -> None:
        self._restore_engine_rng(state["engine_rng"], checkpoint)
        self.sampler.load_state(state["sampler"])
        if self.curriculum is not None:
            self.curriculum.load_state_dict(state["curriculum"])

    def close(self) -> None:
        """Nothing is held beyond the run's parts."""

    def _restore_engine_rng(self, rng_state, checkpoint) -> None:
        generator = self.parts.engine.generator
        try:
            generator.set_state(rng_state)
        except RuntimeError:  # a CUDA generator's state does not fit a CPU one, and back
            raise ConfigError(f"{checkpoint}: its sampling RNG state comes from another device than this "
                              f"run's engine ({generator.device}); resume with the model.device the run "
                              "started with") from None

    def draw(self, step: int) -> Produced:
        """The scored groups of training step `step` (the watchdog's stages name it)."""
        c, p, wd = self.config, self.parts, self.watchdog
        timing = Counter()

        def generate(n: int):
            t0 = time.perf_counter()
            with wd.stage("sample", step):
                samples = self.sampler.next_batch(n, skip=self._is_retired)
            with wd.stage("generate", step):
                rollouts = self._generate(samples)
            t1 = time.perf_counter()
            with wd.stage("score", step):
                scored = self._score(samples, rollouts)
            # every generated group, before dynamic sampling drops the zero-variance ones: an
            # all-correct group is exactly what retires a prompt
            update_curriculum(self.curriculum, *scored)
            timing["generate"] += t1 - t0
            timing["score"] += time.perf_counter() - t1
            return scored

        groups, counts = select_groups(generate, c.sampling)
        if self.curriculum is not None:
            counts.update(self.curriculum.metrics())
        # The oldest weights behind any token of the batch (in-flight updates mix versions).
        oldest = min((s.rollout.policy_version for g in groups for s in g), default=p.engine.policy_version)
        return Produced(groups, counts, timing["generate"], timing["score"], oldest)

    def _generate(self, samples: list) -> list[list[Rollout]]:
        """G completions of each sample's prompt."""
        return self.parts.engine.generate([s.prompt for s in samples], self.config.sampling.group_size,
                                          self.parts.sampling)

    def _score(self, samples: list, rollouts: list[list[Rollout]]) -> tuple[list[list[Scored]], Counter]:
        return score_groups(self.parts.reward_fn, samples, rollouts, self.config.reward.on_error,
                            concurrency_of(self.config.reward))

    def _is_retired(self, sample) -> bool:
        return self.curriculum is not None and self.curriculum.is_retired(sample.prompt)
