"""`rlvr demo --env python`: GRPO over trajectories teaches the shipped tool-use model
(models/tiny-tool, scripts/make_tool_model.py) to call the `python` tool well on two-digit
multiplication; prints held-out greedy success before and after (docs/environments.md, "The
tool-use demo").

The before/after figure is `rlvr.envs.greedy_eval.greedy_success` on the whole test split,
one greedy episode per task, with the recipe's environment and limits: the weights at
model.path, then the run's last checkpoint. Only this module imports the training stack, and
only once the recipe has passed.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from rlvr.config import load_config

# --env NAME -> the recipe it trains (recipes/).
DEMO_ENVS = {"python": "env_python_demo.toml"}


def greedy_score(config, weights_from: Path | None):
    """Greedy success of the recipe's model (or a checkpoint's weights) on its test split."""
    from rlvr.envs.base import EpisodeLimits
    from rlvr.envs.greedy_eval import greedy_success
    from rlvr.orchestrate.components import build
    from rlvr.orchestrate.env_choice import ENV_BUILDERS
    from rlvr.orchestrate.plan import plan_run
    from rlvr.orchestrate.run import repo_root

    parts = build(plan_run(config), repo_root(), weights_from=weights_from)
    e = config.env
    spec = ENV_BUILDERS[e.kind](config, parts)
    limits = EpisodeLimits(max_turns=e.max_turns, max_total_tokens=e.max_total_tokens,
                           max_tool_calls=e.max_tool_calls, wall_s=e.wall_s)
    try:
        return greedy_success(parts.engine, parts.tokenizer, spec.make_env, parts.test_set, limits,
                              config.sampling.max_new_tokens, spec.tools, workers=e.workers)
    finally:
        spec.close()


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
