"""`rlvr demo --env python`: GRPO over trajectories teaches the shipped tool-use model
(models/tiny-tool, scripts/make_tool_model.py) to call the `python` tool well on two-digit
multiplication; prints held-out greedy success before and after (docs/environments.md, "The
tool-use demo").

The before/after figure is `greedy_success` below on the whole test split: one greedy
episode per task through the evaluation's path (`rlvr.orchestrate.episode_eval`), with the recipe's environment and limits: the weights at
model.path, then the run's last checkpoint. Only this module imports the training stack, and
only once the recipe has passed.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from rlvr.config import load_config

# --env NAME -> the recipe it trains (recipes/).
DEMO_ENVS = {"python": "env_python_demo.toml"}


@dataclass(frozen=True)
class GreedyScore:
    """What greedy play on `tasks` held-out tasks gave (one episode each)."""

    tasks: int
    success: float  # the share of tasks solved (evaluate/episodes_eval.py's success rule)
    tool_calls_mean: float  # per episode
    stop_reasons: dict[str, int]

    @classmethod
    def of(cls, played) -> "GreedyScore":
        outcomes = [o for t in played for o in t.outcomes]
        if not outcomes:
            raise ValueError("the greedy demo score needs at least one held-out task")
        n = len(outcomes)
        return cls(tasks=n, success=sum(o.success() for o in outcomes) / n,
                   tool_calls_mean=sum(o.tool_calls for o in outcomes) / n,
                   stop_reasons=dict(Counter(o.stop_reason for o in outcomes)))

    def line(self) -> str:
        stops = ", ".join(f"{k} {v}" for k, v in sorted(self.stop_reasons.items()))
        return (f"{self.success:.1%} of {self.tasks} held-out tasks solved, "
                f"{self.tool_calls_mean:.2f} tool calls an episode (stops: {stops})")


def greedy_success(evaluator, engine, tasks, max_new_tokens: int, seed: int = 0,
                   stop: tuple[str, ...] = ()) -> GreedyScore:
    """One greedy episode per task through the evaluation's path (orchestrate/episode_eval.py)."""
    from rlvr.engines.base import SamplingParams

    params = SamplingParams(max_new_tokens=max_new_tokens, temperature=0.0, stop=stop)
    return GreedyScore.of(evaluator.play(engine, tasks, 1, params, seed))


def greedy_score(config, weights_from: Path | None) -> GreedyScore:
    """Greedy success of the recipe's model (or a checkpoint's weights) on its test split."""
    from rlvr.orchestrate.components import build
    from rlvr.orchestrate.episode_eval import EpisodeEvaluator
    from rlvr.orchestrate.plan import plan_run
    from rlvr.orchestrate.run import repo_root

    parts = build(plan_run(config), repo_root(), weights_from=weights_from)
    evaluator = EpisodeEvaluator.from_config(config, parts)
    try:
        # the turn budget and stop strings a training turn has (the demo scores the policy as it plays)
        return greedy_success(evaluator, parts.engine, parts.test_set, config.sampling.max_new_tokens,
                              config.run.seed, tuple(config.sampling.stop))
    finally:
        evaluator.close()


def env_demo(args: argparse.Namespace, recipes_dir: Path, load_heavy) -> int:
    """Train `DEMO_ENVS[args.env]` and report greedy success before and after."""
    overrides = [f"run.name=demo-{args.env}-{time.strftime('%Y%m%d-%H%M%S')}", *args.overrides]
    config = load_config(recipes_dir / DEMO_ENVS[args.env], overrides)
    orchestrate = load_heavy()
    from rlvr.train.checkpoint import list_checkpoints

    print(f"rlvr demo --env {args.env}: GRPO over trajectories on {config.model.path}, env.kind = "
          f"{config.env.kind!r}, {config.train.steps} steps (at most {config.train.time_limit_s:.0f} s of training)")
    before = greedy_score(config, None)
    print(f"before: {before.line()}", flush=True)
    result = orchestrate.train(config)
    after = greedy_score(config, list_checkpoints(result.folder.checkpoints)[-1])
    gain = (after.success - before.success) * 100
    print(f"after:  {after.line()}")
    print(f"held-out greedy success: {before.success:.1%} -> {after.success:.1%} ({gain:+.1f} points) "
          f"after {result.steps} steps, {result.train_seconds / 60:.1f} min of training")
    summary = {"env": args.env, "seed": config.run.seed, "steps": result.steps,
               "train_seconds": round(result.train_seconds, 1), "tasks": before.tasks,
               "success_before": before.success, "success_after": after.success,
               "tool_calls_before": before.tool_calls_mean, "tool_calls_after": after.tool_calls_mean}
    (result.folder.path / "demo_env.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"run folder:   {result.folder.path}")
    print(f"reward curve: {result.folder.reward_curve}")
    return 0
