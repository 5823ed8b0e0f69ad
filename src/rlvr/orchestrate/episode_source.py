"""Scored groups from environment episodes: the rollout source of an environment run.

`EpisodeSource` has the interface the producers draw from (`draw`, `state`, `load_state`,
`close`, like `RolloutSource`); `SOURCES` in orchestrate/source_choice.py picks it for every env.kind
but "none" and "single_turn" (orchestrate/one_turn_source.py), and
`EpisodeSource.from_run(config, parts, watchdog)` builds it from the [env] section
(its environment: orchestrate/env_choice.py). Episode seeds are
`seed * 1_000_003 + step * 10_007 + i`: fixed by the run's seed, the step and the row, so a
resumed run replays the same games. Both producers draw from it (orchestrate/producers.py);
the async one calls `draw` (and so the runner) on its own thread only; the trainer's thread
reads `state` only while no batch is being drawn (AsyncProducer.next_state keeps the state
before each pending batch), and the environments' steps run in the runner's pool.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from contextlib import nullcontext

from rlvr.algo.advantages import outcome_advantages
from rlvr.algo.curriculum import PassRateTracker
from rlvr.config import Config
from rlvr.envs.base import Env, EpisodeLimits
from rlvr.envs.credit import TurnCredit, credit_rule
from rlvr.envs.episodes import EpisodeRunner, episode_metrics
from rlvr.envs.failures import FailurePool
from rlvr.envs.generator import TaskGenerator
from rlvr.envs.render import renderer_for
from rlvr.envs.scored import EpisodeScoring, episode_groups
from rlvr.errors import ConfigError
from rlvr.orchestrate.env_choice import ENV_BUILDERS
from rlvr.orchestrate.parts import Parts
from rlvr.orchestrate.rollouts import Produced
from rlvr.orchestrate.task_generators import run_generator
from rlvr.orchestrate.watchdog import Watchdog
from rlvr.tasks import PromptSampler
from rlvr.types import Scored

Groups = list[list[Scored]]


class EpisodeSource:
    """`prompts` tasks a step, `group_size` episodes each, all played together by `runner`."""

    def __init__(self, runner: EpisodeRunner, make_env: Callable[[], Env], sampler: PromptSampler, *,
                 prompts: int, group_size: int, seed: int, scoring: EpisodeScoring = EpisodeScoring(),
                 watchdog: Watchdog | None = None, on_close: Callable[[], None] = lambda: None,
                 credit: Callable[[Groups], Groups] = lambda groups: groups, pool: FailurePool | None = None,
                 retire: PassRateTracker | None = None, generator: TaskGenerator | None = None,
                 after_batch: Callable[[list], dict[str, float]] = lambda episodes: {}):
        self.runner, self.make_env, self.sampler, self.pool = runner, make_env, sampler, pool
        self.prompts, self.group_size, self.seed, self.scoring = prompts, group_size, seed, scoring
        self.watchdog, self.on_close, self.credit = watchdog, on_close, credit
        self.retire, self.generator = retire, generator  # sampling.curriculum; the features' generator
        self.after_batch = after_batch  # EnvSpec.after_batch: the fault-rate limit, env/emulated

    @classmethod
    def from_run(cls, config: Config, parts: Parts, watchdog: Watchdog) -> "EpisodeSource":
        """The episodes of a run: its engine, tokenizer, train split and sampling settings,
        the [env] section's environment, limits, hybrid reward and credit rule."""
        e, s = config.env, config.sampling
        context = getattr(parts.model.config, "max_position_embeddings", None)
        if context is not None and e.max_total_tokens > context:
            raise ConfigError(f"env.max_total_tokens = {e.max_total_tokens} is above the context of model.path "
                              f"({context} tokens)")
        spec = ENV_BUILDERS[e.kind](config, parts)
        limits = EpisodeLimits(max_turns=e.max_turns, max_total_tokens=e.max_total_tokens,
                               max_tool_calls=e.max_tool_calls, wall_s=e.wall_s)
        runner = EpisodeRunner(parts.engine, renderer_for(parts.tokenizer), parts.sampling, limits,
                               workers=e.workers, tools=spec.tools)
        generator = run_generator(config, spec.make_env)
        pool = FailurePool(e.failure_pool, e.failure_mix, generator, e.failure_fresh) if e.curriculum == "failures" else None
        retire = PassRateTracker(threshold=s.retire_at) if s.curriculum != "none" else None
        return cls(runner, spec.make_env, PromptSampler(parts.train_set, seed=config.run.seed),
                   prompts=s.prompts_per_step, group_size=s.group_size, seed=config.run.seed,
                   scoring=EpisodeScoring(e.step_weight), watchdog=watchdog, on_close=spec.close,
                   credit=credit_rule(e.credit, turn_credit(config)), pool=pool, retire=retire, generator=generator,
                   after_batch=spec.after_batch)

    def state(self) -> dict:
        out = {"sampler": self.sampler.state(), "engine_rng": self.runner.engine.generator.get_state()}
        if self.retire is not None:
            out["curriculum"] = self.retire.state_dict()
        return out | ({"failures": self.pool.state()} if self.pool is not None else {})

    def load_state(self, state: dict, checkpoint) -> None:
        self.runner.engine.generator.set_state(state["engine_rng"])
        self.sampler.load_state(state["sampler"])
        if self.pool is not None and "failures" in state:
            self.pool.load_state(state["failures"])
        if self.retire is not None and "curriculum" in state:
            self.retire.load_state_dict(state["curriculum"])

    def accept_inflight_weights(self, load: Callable[[], None]) -> None:
        """`load` takes the trainer's newest weights into the engine, if any are waiting; it is
        called between the turns of the episodes in play (the async producer's in-flight
        updates, orchestrate/producers.py). Each policy token keeps the version that sampled
        it (Trajectory.versions), so one episode may span several versions."""
        self.runner.before_turn = load

    def close(self) -> None:
        """The run ended: stop the environments' threads and what the environment holds (a sandbox)."""
        self.runner.close()
        self.on_close()

    def _stage(self, name: str, step: int):
        return self.watchdog.stage(name, step) if self.watchdog is not None else nullcontext()

    def draw(self, step: int) -> Produced:
        t0 = time.perf_counter()
        with self._stage("sample", step):
            tasks = self.sampler.next_batch(self.prompts, skip=self._retired)
            if self.pool is not None:  # env.curriculum = "failures": a seeded share from the pool
                tasks = self.pool.mix(tasks, random.Random(self.seed * 1_000_003 + step))
        flat = [s for s in tasks for _ in range(self.group_size)]
        seeds = [self.seed * 1_000_003 + step * 10_007 + i for i in range(len(flat))]
        with self._stage("generate", step):  # turns and environment steps interleave
            episodes = self.runner.run(self.make_env, flat, seeds)
        groups, counts = episode_groups(episodes, self.group_size, self.scoring)
        if self.pool is not None:
            g = self.group_size
            self.pool.observe(step, [(t, episodes[i * g:(i + 1) * g]) for i, t in enumerate(tasks)])
            counts.update({f"env/{k}": v for k, v in self.pool.metrics(step).items()})
        if self.retire is not None:
            retire_solved(self.retire, tasks, episodes, self.group_size, counts)
        groups = self.credit(groups)
        counts.update(episode_metrics(episodes))
        counts.update(self.after_batch(episodes))
        oldest = min((s.rollout.policy_version for g in groups for s in g),
                     default=self.runner.engine.policy_version)
        # Generation and environment steps interleave; the whole episode time counts as generation.
        return Produced(groups, counts, time.perf_counter() - t0, 0.0, oldest)


    def _retired(self, sample) -> bool:
        return self.retire is not None and self.retire.is_retired(curriculum_key(sample))


def curriculum_key(sample) -> str:
    """sampling.curriculum's key of an episode task: its prompt and gold (the game), so that a
    prompt shared by every row (guess_number's) does not retire them all."""
    return f"{sample.prompt}\x00{sample.answer}"


def retire_solved(tracker: PassRateTracker, tasks: list, episodes: list, g: int, counts) -> None:
    """ScaleRL's no-positive-resampling on episodes (rlvr.algo.curriculum): a task whose latest
    G episodes succeed at the pass rate sampling.retire_at is drawn no more."""
    for i, task in enumerate(tasks):
        counts["curriculum/retired_now"] += int(tracker.update(curriculum_key(task),
                                                               [float(ep.success) for ep in episodes[i * g:(i + 1) * g]]))
    counts.update(tracker.metrics())


def turn_credit(config: Config) -> TurnCredit:
    """env.credit = "per_turn"'s options: the hybrid weight, the discount, algo's baseline and scale."""
    e, a = config.env, config.algo

    def normalise(returns, ids):
        return outcome_advantages(returns, ids, baseline=a.baseline, scale=a.scale, eps=a.adv_eps)

    return TurnCredit(step_weight=e.step_weight, gamma=e.turn_discount, normalise=normalise)
