"""The sampling defaults of `rlvr eval`, taken from a recipe so that its numbers sit beside the
trainer's `eval/accuracy` and `eval/pass@k` (same max_new_tokens, temperature and stop strings),
and the plan `rlvr eval` and `rlvr serve` build their engine, tokenizer and reward from.

Which recipe: `--recipe NAME_OR_FILE` if given; else, for a checkpoint inside a run folder
(`runs/NAME/checkpoints/step_N`), that run's `config.toml`; else the demo recipe, the one that
trains the shipped tiny model.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from typing import TYPE_CHECKING

from rlvr.errors import ConfigError

if TYPE_CHECKING:
    from rlvr.config import Config
    from rlvr.orchestrate.plan import RunPlan

REPO = Path(__file__).resolve().parents[3]
DEFAULT_RECIPE = "demo"


def recipe_file(name_or_path: str) -> Path:
    """A recipe file, or the name of one in recipes/."""
    path = Path(name_or_path)
    if path.is_file():
        return path
    candidate = REPO / "recipes" / f"{name_or_path.removesuffix('.toml')}.toml"
    if candidate.is_file():
        return candidate
    raise ConfigError(f"--recipe {name_or_path}: no such recipe file or name in {REPO / 'recipes'}")


def run_config_of(model: str | None) -> Path | None:
    """config.toml of the run folder holding the checkpoint `model`, if it is one."""
    if model is None:
        return None
    path = Path(model).resolve()
    if path.parent.name in ("checkpoints", "best_checkpoint") and (path.parent.parent / "config.toml").is_file():
        return path.parent.parent / "config.toml"
    if path.name == "best_checkpoint" and (path.parent / "config.toml").is_file():
        return path.parent / "config.toml"
    return None


def recipe_source(args: argparse.Namespace) -> Path:
    """The recipe file the defaults come from (see the module docstring)."""
    return recipe_file(args.recipe) if args.recipe else run_config_of(args.model) or recipe_file(DEFAULT_RECIPE)


def fill_defaults(args: argparse.Namespace) -> str:
    """Set args.max_new_tokens, args.temperature, args.stop and args.chat_template from the
    recipe where not given; returns the recipe file they came from."""
    from rlvr.config import load_config

    source = recipe_source(args)
    config = load_config(source)
    if args.max_new_tokens is None:
        args.max_new_tokens = config.eval.max_new_tokens
    if args.temperature is None:
        args.temperature = config.eval.temperature
    args.stop = tuple(config.sampling.stop)
    if getattr(args, "chat_template", None) is None:
        args.chat_template = config.model.chat_template
    return str(source)


def command_plan(args: argparse.Namespace, config: "Config | None" = None, chat_template: str | None = None) -> "RunPlan":
    """The run plan of the recipe (`config`, else `recipe_source(args)`'s), with the command's
    --seed (the engine's sampling seed) and `chat_template` (None: the recipe's): the plan
    `rlvr eval` and `rlvr serve` build from (orchestrate/model_parts.py)."""
    from rlvr.config import load_config
    from rlvr.orchestrate.plan import plan_run

    config = config if config is not None else load_config(recipe_source(args))
    template = chat_template or config.model.chat_template
    return plan_run(config.model_copy(update={"run": config.run.model_copy(update={"seed": args.seed}),
                                              "model": config.model.model_copy(update={"chat_template": template})}))
