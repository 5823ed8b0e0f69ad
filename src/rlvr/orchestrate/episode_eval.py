"""Held-out tasks played as episodes, for evaluation: `rlvr eval` on an environment recipe and
the in-training evaluation of an environment run (eval.size > 0).

The episodes go through the training run's path: the same environment factory (`ENV_BUILDERS`
in env_choice.py, or the run's own `EpisodeSource`), renderer, limits and `EpisodeRunner`;
only the sampling differs (the eval settings: eval.max_new_tokens a turn, eval.temperature,
temperature 0 for the greedy pass). Each task is played k times; episode i of the flat list
(task i // k) gets seed `EVAL_SEED_BASE + seed * 1_000_003 + i`, fixed by the run's (or the
command's) seed and the episode's place, never by the step, so every evaluation of a run
plays the same games, and away from the training seeds (episode_source.py). The summaries
are rlvr.evaluate.episodes_eval's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from rlvr.config import Config
from rlvr.engines.base import SamplingParams
from rlvr.envs.base import RUNNER_STOP_REASONS, Env, EpisodeLimits
from rlvr.envs.episodes import Episode, EpisodeRunner
from rlvr.envs.generator import TaskGenerator
from rlvr.envs.render import Renderer, renderer_for
from rlvr.envs.scored import episode_record
from rlvr.evaluate.episodes_eval import EpisodeOutcome, TaskEpisodes, greedy_metrics, sampled_metrics
from rlvr.orchestrate.env_choice import ENV_BUILDERS
from rlvr.orchestrate.parts import ModelParts
from rlvr.types import Sample

EVAL_SEED_BASE = 2 ** 40  # training seeds (seed * 1_000_003 + step * 10_007 + i) stay far below


def eval_seeds(seed: int, count: int) -> list[int]:
    return [EVAL_SEED_BASE + seed * 1_000_003 + i for i in range(count)]


def outcome_of(ep: Episode, renderer: Renderer | None = None) -> EpisodeOutcome:
    """One finished episode as the evaluation keeps it; r_T is the last step's reward. With
    `renderer`, the record also holds the first observation as rendered (`first_observation`:
    the prompt ids decoded, what the policy read before its first turn; report.html shows it)."""
    traj = ep.trajectory
    record = episode_record(ep) if traj is not None else {"seed": ep.seed, "turns": [], "stop_reason": ep.stop_reason,
                                                          "error": ep.error}
    if renderer is not None and traj is not None:
        record["first_observation"] = renderer.tokenizer.decode(traj.prompt_ids)
    if ep.env is not None:
        record.update(ep.env.report())
    return EpisodeOutcome(reward=ep.step_rewards[-1] if ep.step_rewards else 0.0,
                          env_ended=ep.stop_reason not in RUNNER_STOP_REASONS,
                          turns=len(traj.turns) if traj is not None else 0, tool_calls=ep.tool_calls,
                          stop_reason=ep.stop_reason, error=ep.error, record=record)


@dataclass
class EpisodeEvaluator:
    """How a run plays one episode (its factory, renderer, limits, tools), for evaluation."""

    make_env: Callable[[], Env]
    renderer: Renderer
    limits: EpisodeLimits
    tools: list[dict] | None = None
    workers: int = 16
    close: Callable[[], None] = lambda: None  # what the environment holds (a sandbox)
    generator: TaskGenerator | None = None  # the run's, for held-out success per feature

    @classmethod
    def from_config(cls, config: Config, parts: ModelParts) -> "EpisodeEvaluator":
        """From the [env] section, as `EpisodeSource.from_run` builds a run's episodes (the
        parts' `tokenizer` renders, their `reward_fn` scores the environments' answers)."""
        e = config.env
        spec = ENV_BUILDERS[e.kind](config, parts)
        limits = EpisodeLimits(max_turns=e.max_turns, max_total_tokens=e.max_total_tokens,
                               max_tool_calls=e.max_tool_calls, wall_s=e.wall_s)
        return cls(spec.make_env, renderer_for(parts.tokenizer), limits, spec.tools, e.workers, spec.close)

    @classmethod
    def from_source(cls, source, workers: int) -> "EpisodeEvaluator":
        """A training run's own episodes (an `EpisodeSource`): its environment factory, so
        that the evaluation opens no second sandbox; the source closes what it holds."""
        r = source.runner
        return cls(source.make_env, r.renderer, r.limits, r.tools, workers, generator=source.generator)

    def play(self, engine, tasks: list[Sample], k: int, params: SamplingParams, seed: int, *,
             first: int = 0, first_observation: bool = False) -> list[TaskEpisodes]:
        """k episodes of each task, all together, on `engine` (one with `generate_ids`).
        first: the place of tasks[0] in the whole held-out list (a chunk of it, `rlvr eval
        --chunk-prompts`), so that every episode keeps the seed of its place in the whole
        list. first_observation: keep the rendered first observation in each record."""
        flat = [t for t in tasks for _ in range(k)]
        seeds = eval_seeds(seed, (first + len(tasks)) * k)[first * k:]
        with EpisodeRunner(engine, self.renderer, params, self.limits, workers=self.workers,
                           tools=self.tools) as runner:
            episodes = runner.run(self.make_env, flat, seeds)
        renderer = self.renderer if first_observation else None
        return [TaskEpisodes(t.prompt, t.answer, t.source,
                             tuple(outcome_of(ep, renderer) for ep in episodes[i * k:(i + 1) * k]))
                for i, t in enumerate(tasks)]


def success_by_feature(generator: TaskGenerator, test: list[Sample], played: list[TaskEpisodes]) -> dict[str, float]:
    """`eval/env/success/<feature>=<value>`: the greedy success rate of the held-out tasks with
    that feature value (the generator's `features`), and `eval/env/tasks/<feature>=<value>`
    their count; the failure curriculum's aim is read against these."""
    wins, counts = Counter(), Counter()
    for sample, task in zip(test, played):
        for name, value in generator.features(sample).items():
            counts[f"{name}={value}"] += 1
            wins[f"{name}={value}"] += task.successes()
    return {**{f"eval/env/success/{k}": wins[k] / n for k, n in counts.items()},
            **{f"eval/env/tasks/{k}": float(n) for k, n in counts.items()}}


def run_eval_metrics(evaluator: EpisodeEvaluator, engine, test: list[Sample], eval_section,
                     stop: tuple[str, ...], seed: int) -> dict[str, float]:
    """The in-training evaluation of an environment run: one greedy episode per task
    (`eval/accuracy`, `eval/env/*`), and with eval.samples > 0 that many sampled episodes per
    task at eval.temperature (`eval/success_rate`, `eval/pass@k`, `eval/disagree_frac`). As
    for single-turn pass@k (evaluate/sampled.py), the engine's generator is seeded with
    `seed + 1` for the sampled pass and put back after it, so training draws as it would have."""
    e = eval_section
    greedy = SamplingParams(max_new_tokens=e.max_new_tokens, temperature=0.0, stop=stop)
    played = evaluator.play(engine, test, 1, greedy, seed)
    metrics = greedy_metrics(played)
    if evaluator.generator is not None:
        metrics.update(success_by_feature(evaluator.generator, test, played))
    if e.samples:
        sampled = SamplingParams(max_new_tokens=e.max_new_tokens, temperature=e.temperature, stop=stop)
        generator = engine.generator
        saved = generator.get_state()
        generator.manual_seed(seed + 1)
        try:
            tasks = evaluator.play(engine, test, e.samples, sampled, seed)
        finally:
            generator.set_state(saved)
        metrics.update(sampled_metrics(tasks, e.k))
    return metrics
