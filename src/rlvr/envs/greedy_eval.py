"""Greedy success on held-out tasks: one episode per task at temperature 0, through the same
`EpisodeRunner` a run trains with. What `rlvr demo --env python` reports before and after
training; a stop-gap until `rlvr eval` scores environments (success@k over sampled episodes),
which should replace it.

    success = (episodes the environment ended itself with a terminal reward >= 1) / tasks

(`Episode.success`: an episode cut by a runner limit never counts, whatever it said.)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from rlvr.engines.base import SamplingParams
from rlvr.envs.base import Env, EpisodeLimits
from rlvr.envs.episodes import Episode, EpisodeRunner
from rlvr.envs.render import renderer_for
from rlvr.types import Sample


@dataclass(frozen=True)
class GreedyScore:
    """What greedy play on `tasks` tasks gave."""

    tasks: int
    success: float  # the share of tasks solved
    tool_calls_mean: float  # per episode
    stop_reasons: dict[str, int]
    episodes: tuple[Episode, ...] = ()

    def line(self) -> str:
        stops = ", ".join(f"{k} {v}" for k, v in sorted(self.stop_reasons.items()))
        return (f"{self.success:.1%} of {self.tasks} held-out tasks solved, "
                f"{self.tool_calls_mean:.2f} tool calls an episode (stops: {stops})")


def greedy_success(engine, tokenizer, make_env: Callable[[], Env], tasks: list[Sample], limits: EpisodeLimits,
                   max_new_tokens: int, tools: list[dict] | None = None, workers: int = 16) -> GreedyScore:
    """Play each task once, greedily, on `engine` (one with `generate_ids`, e.g. HFEngine);
    episode seeds are the task indices (greedy play uses no randomness of the engine's)."""
    if not tasks:
        raise ValueError("greedy_success needs at least one task")
    params = SamplingParams(max_new_tokens=max_new_tokens, temperature=0.0)
    with EpisodeRunner(engine, renderer_for(tokenizer), params, limits, workers=workers, tools=tools) as runner:
        episodes = runner.run(make_env, tasks, seeds=list(range(len(tasks))))
    n = len(episodes)
    return GreedyScore(tasks=n, success=sum(ep.success for ep in episodes) / n,
                       tool_calls_mean=sum(ep.tool_calls for ep in episodes) / n,
                       stop_reasons=dict(Counter(ep.stop_reason for ep in episodes)), episodes=tuple(episodes))
