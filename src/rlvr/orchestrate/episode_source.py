"""Scored groups from environment episodes: the rollout source of an environment run.

`EpisodeSource` has the interface the producers draw from (`draw`, `state`, `load_state`,
like `RolloutSource`), so `SyncProducer(EpisodeSource(...), engine, watchdog, steps=...)` is
an environment run's producer. NOT WIRED: no config section builds it and `PRODUCERS` has no
entry for it (the config and the loop's wiring are owned elsewhere; see docs/environments.md,
"What is not built"). Episode seeds are `seed * 1_000_003 + step * 10_007 + i`: fixed by the
run's seed, the step and the row, so a resumed run replays the same games.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rlvr.envs.base import Env
from rlvr.envs.episodes import EpisodeRunner, episode_metrics
from rlvr.envs.scored import EpisodeScoring, episode_groups
from rlvr.orchestrate.rollouts import Produced
from rlvr.tasks import PromptSampler


class EpisodeSource:
    """`prompts` tasks a step, `group_size` episodes each, all played together by `runner`."""

    def __init__(self, runner: EpisodeRunner, make_env: Callable[[], Env], sampler: PromptSampler, *,
                 prompts: int, group_size: int, seed: int, scoring: EpisodeScoring = EpisodeScoring()):
        self.runner, self.make_env, self.sampler = runner, make_env, sampler
        self.prompts, self.group_size, self.seed, self.scoring = prompts, group_size, seed, scoring

    def state(self) -> dict:
        return {"sampler": self.sampler.state(), "engine_rng": self.runner.engine.generator.get_state()}

    def load_state(self, state: dict, checkpoint) -> None:
        self.runner.engine.generator.set_state(state["engine_rng"])
        self.sampler.load_state(state["sampler"])

    def draw(self, step: int) -> Produced:
        t0 = time.perf_counter()
        tasks = self.sampler.next_batch(self.prompts)
        flat = [s for s in tasks for _ in range(self.group_size)]
        seeds = [self.seed * 1_000_003 + step * 10_007 + i for i in range(len(flat))]
        episodes = self.runner.run(self.make_env, flat, seeds)
        groups, counts = episode_groups(episodes, self.group_size, self.scoring)
        counts.update(episode_metrics(episodes))
        oldest = min((s.rollout.policy_version for g in groups for s in g),
                     default=self.runner.engine.policy_version)
        # Generation and environment steps interleave; the whole episode time counts as generation.
        return Produced(groups, counts, time.perf_counter() - t0, 0.0, oldest)
