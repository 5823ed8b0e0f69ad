"""Many episodes at once: each turn, one batched generation for every live episode, then every
environment step in parallel threads.

    runner = EpisodeRunner(engine, PlainRenderer(tokenizer), SamplingParams(...), EpisodeLimits())
    episodes = runner.run(GuessNumberEnv, samples, seeds)

One turn of the runner:
  1. episodes whose trajectory has no room left end with "max_tokens";
  2. `before_turn()` (the async producer's in-flight updates load new weights there), then
     `engine.generate_ids` once, on the exact token sequence of every live episode;
  3. each episode appends its sampled ids (cut to the token budget: "max_tokens");
  4. the environments' `step`s run in a thread pool, so a slow step (a sandbox run) holds up
     only its own episode for the turn's duration, not the others' steps; a step that raises
     ends its episode with "env_error" (the exception is logged and counted) and a step
     still running at the episode's wall-clock limit ends it with "wall_time";
  5. the limits are checked (turns, tool calls, wall time), and the observation's ids are
     appended (rendered alone; "max_tokens" if they would not leave room for a turn).

The runner only records step rewards: the hybrid rule is rlvr.envs.scored's, per-turn credit
rlvr.envs.credit's; rlvr.orchestrate.episode_source wires episodes into a run.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Protocol

from rlvr.engines.base import SamplingParams
from rlvr.envs import base as b
from rlvr.envs import contract
from rlvr.envs.render import Renderer
from rlvr.envs.trajectory import Trajectory, Turn, turn_tokens
from rlvr.types import Rollout, Sample

log = logging.getLogger(__name__)


class TokenEngine(Protocol):
    """What the runner needs of an engine: sampling from token ids (every `Engine` has it:
    `Engine.generate_ids` states what it guarantees; test fakes need only this much).
    A source of episodes also checkpoints its `generator` and reads its `policy_version`."""

    def generate_ids(self, rows: list[list[int]], params: SamplingParams) -> list[Rollout]: ...

    @property
    def generator(self): ...

    @property
    def policy_version(self) -> int: ...


@dataclass
class Episode:
    """One episode's state and outcome. `stop_reason` is None while it runs."""

    sample: Sample
    seed: int
    env: b.Env | None = None
    trajectory: Trajectory | None = None  # None only when the environment failed to start
    started: float = field(default_factory=time.monotonic)
    step_rewards: list[float] = field(default_factory=list)
    tool_calls: int = 0
    metrics: Counter = field(default_factory=Counter)
    stop_reason: str | None = None
    error: str | None = None  # "ExcType: message" when the environment raised
    fault: bool = False  # ended by an EnvFault (its infrastructure failed): not trained on

    @property
    def reward(self) -> float:
        """The sum of the step rewards (the terminal reward is the last step's)."""
        return sum(self.step_rewards)

    @property
    def success(self) -> bool:
        """The environment ended the episode itself (not a runner limit) with a terminal
        reward of at least 1: solved, or answered right."""
        return (self.stop_reason is not None and self.stop_reason not in b.RUNNER_STOP_REASONS and not self.fault
                and bool(self.step_rewards) and self.step_rewards[-1] >= 1.0)

    def elapsed(self) -> float:
        return time.monotonic() - self.started


class EpisodeRunner:
    """Runs batches of episodes on one engine; `workers` threads step the environments."""

    def __init__(self, engine: TokenEngine, renderer: Renderer, params: SamplingParams,
                 limits: b.EpisodeLimits = b.EpisodeLimits(), *, workers: int = 16,
                 tools: list[dict] | None = None):
        self.engine, self.renderer, self.params, self.limits = engine, renderer, params, limits
        self.tools = tools  # JSON schemas for the chat template's `tools=` (rlvr.envs.tools)
        self.pool = ThreadPoolExecutor(workers, thread_name_prefix="rlvr-env")
        # Called before every turn's generation, on the thread that runs the episodes: the
        # async producer's in-flight updates load new weights here, so a turn's prefill and
        # first token already use them (the engine itself only polls between decode steps,
        # which a one-token turn never reaches). The environments' threads never call it.
        self.before_turn: Callable[[], None] = lambda: None

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)  # an abandoned step may still run

    def __enter__(self) -> "EpisodeRunner":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def run(self, make_env: Callable[[], b.Env], samples: list[Sample], seeds: list[int]) -> list[Episode]:
        """Play one episode per (sample, seed), all together, until every one has ended."""
        if len(samples) != len(seeds):
            raise ValueError(f"one seed per sample: {len(samples)} samples, {len(seeds)} seeds")
        episodes = [Episode(s, seed) for s, seed in zip(samples, seeds)]
        futures = [self.pool.submit(self._start, make_env, ep) for ep in episodes]
        for ep, fut in zip(episodes, futures):
            self._wait(ep, fut, lambda first, ep=ep: self._begin(ep, first))
        while live := [ep for ep in episodes if ep.stop_reason is None]:
            self.turn(live)
        for ep in episodes:
            if ep.env is not None:
                ep.env.close()
        return episodes

    def turn(self, live: list[Episode]) -> None:
        """One policy turn and one environment step for every live episode."""
        for ep in live:
            if ep.trajectory.total_tokens >= self.limits.max_total_tokens:
                ep.stop_reason = b.STOP_MAX_TOKENS
        live = [ep for ep in live if ep.stop_reason is None]
        if not live:
            return
        self.before_turn()
        rollouts = self.engine.generate_ids([ep.trajectory.sequence() for ep in live], self.params)
        stepping = [(ep, r) for ep, r in zip(live, rollouts) if self._take_policy_turn(ep, r)]
        futures = [self.pool.submit(ep.env.step, r.text) for ep, r in stepping]
        for (ep, r), fut in zip(stepping, futures):
            self._wait(ep, fut, lambda result, ep=ep, r=r: self._take_step(ep, r, result))

    def _start(self, make_env: Callable[[], b.Env], ep: Episode) -> str:
        ep.env = make_env()
        return ep.env.reset(ep.sample, ep.seed)

    def _begin(self, ep: Episode, first_observation: str) -> None:
        contract.first_observation(ep.env, first_observation)  # a broken contract stops the run (contract.py)
        ep.trajectory = Trajectory(self.renderer.prompt_ids(first_observation, self.tools))
        if ep.trajectory.total_tokens >= self.limits.max_total_tokens:
            ep.stop_reason = b.STOP_MAX_TOKENS

    def _wait(self, ep: Episode, fut: Future, then: Callable) -> None:
        """Wait for an environment call within the episode's wall time; a raise or a timeout
        ends this episode only (deliberate fault tolerance: counted in `env_error`)."""
        try:
            result = fut.result(timeout=max(0.0, self.limits.wall_s - ep.elapsed()))
        except FutureTimeout:
            ep.stop_reason = b.STOP_WALL_TIME
            return
        except b.EnvFault as e:  # the environment's server failed: this episode ends with its own reason
            ep.stop_reason, ep.error, ep.fault = e.stop_reason, f"{type(e).__name__}: {e}", True
            ep.metrics[f"faults/{e.stop_reason}"] += 1
            log.warning("environment fault on %s (seed %d): %s", ep.sample.source or ep.sample.prompt[:40],
                        ep.seed, ep.error)
            return
        except Exception as e:  # the environment's own failure, whatever it is
            ep.stop_reason, ep.error = b.STOP_ENV_ERROR, f"{type(e).__name__}: {e}"
            ep.metrics["env_errors"] += 1
            log.warning("environment failed on %s (seed %d): %s", ep.sample.source or ep.sample.prompt[:40],
                        ep.seed, ep.error)
            return
        then(result)

    def _take_policy_turn(self, ep: Episode, rollout: Rollout) -> bool:
        """Append the sampled ids (cut to the budget); True when the environment should step."""
        ids, logprobs, versions = turn_tokens(rollout)
        room = self.limits.max_total_tokens - ep.trajectory.total_tokens
        cut = len(ids) > room
        ep.trajectory.append_policy(ids[:room], logprobs[:room], versions[:room])
        if cut or ep.elapsed() >= self.limits.wall_s:
            ep.trajectory.turns.append(Turn(rollout.text, min(len(ids), room), "", 0, 0.0, 0, rollout.finish_reason))
            ep.stop_reason = b.STOP_MAX_TOKENS if cut else b.STOP_WALL_TIME
            return False
        return True

    def _take_step(self, ep: Episode, rollout: Rollout, result: b.StepResult) -> None:
        contract.step_result(ep.env, result)
        ep.step_rewards.append(float(result.reward))
        ep.tool_calls += result.tool_calls
        ep.metrics.update(result.metrics)
        observation = "" if result.done else result.observation
        shown = self._show(ep, observation, result)
        ep.trajectory.turns.append(Turn(rollout.text, len(rollout.completion_ids), observation, shown,
                                        float(result.reward), result.tool_calls, rollout.finish_reason))

    def _show(self, ep: Episode, observation: str, result: b.StepResult) -> int:
        """Append the observation's ids unless the episode ends here; how many were appended."""
        ep.stop_reason = self._limit_reached(ep, result)
        if ep.stop_reason is not None:
            return 0
        obs_ids = self.renderer.observation_ids(observation, ep.trajectory.ids[-1] if ep.trajectory.ids else None)
        if ep.trajectory.total_tokens + len(obs_ids) >= self.limits.max_total_tokens:
            ep.stop_reason = b.STOP_MAX_TOKENS  # no room for the observation and a turn after it
            return 0
        ep.trajectory.append_observation(obs_ids)
        return len(obs_ids)

    def _limit_reached(self, ep: Episode, result: b.StepResult) -> str | None:
        """The stop reason after a step: the environment's own, else the first limit reached."""
        lim = self.limits
        if result.done:
            return result.stop_reason or b.STOP_DONE
        if len(ep.trajectory.turns) + 1 >= lim.max_turns:  # this turn is recorded after the check
            return b.STOP_MAX_TURNS
        if ep.tool_calls >= lim.max_tool_calls:
            return b.STOP_MAX_TOOL_CALLS
        if ep.elapsed() >= lim.wall_s:
            return b.STOP_WALL_TIME
        return None


def episode_metrics(episodes: list[Episode]) -> dict[str, float]:
    """Per-batch metrics (definitions in docs/metrics.md, "Environments"): turns and tool calls
    per episode, the success rate, the share of each stop reason (the runner's always, 0 when
    none ended so), the summed step metrics, the environment errors."""
    n = max(1, len(episodes))
    out = {"env/episodes": float(len(episodes)),
           "env/turns_mean": sum(len(ep.trajectory.turns) for ep in episodes if ep.trajectory) / n,
           "env/tool_calls_mean": sum(ep.tool_calls for ep in episodes) / n,
           "env/reward_mean": sum(ep.reward for ep in episodes) / n,
           "env/success_rate": sum(ep.success for ep in episodes) / n}
    out.update({f"env/stop/{reason}": 0.0 for reason in b.RUNNER_STOP_REASONS})  # every step's line has them
    for reason, count in Counter(ep.stop_reason for ep in episodes).items():
        out[f"env/stop/{reason}"] = count / n
    totals = Counter()
    for ep in episodes:
        totals.update(ep.metrics)
    out.update({f"env/{k}": float(v) for k, v in totals.items()})
    attempts = totals.get("tool/calls", 0) + totals.get("tool/malformed", 0)
    out["env/malformed_rate"] = totals.get("tool/malformed", 0) / attempts if attempts else 0.0
    return out
