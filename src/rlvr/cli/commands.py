"""What each `rlvr` subcommand does, given its parsed arguments."""

from __future__ import annotations

import argparse
from pathlib import Path

from rlvr.config import dump_config, load_config
from rlvr.errors import ConfigError
from rlvr.orchestrate import resume, train as run_training
from rlvr.orchestrate.run import repo_root, timestamp


def recipes_dir() -> Path:
    return repo_root() / "recipes"


def find_recipe(name_or_path: str) -> Path:
    p = Path(name_or_path)
    if p.is_file():
        return p
    candidate = recipes_dir() / f"{name_or_path.removesuffix('.toml')}.toml"
    if candidate.is_file():
        return candidate
    known = ", ".join(sorted(r.stem for r in recipes_dir().glob("*.toml")))
    raise ConfigError(f"{name_or_path}: no such recipe file or name (recipes: {known})")


def train(args: argparse.Namespace) -> int:
    if args.resume is not None:
        if args.recipe:
            raise ConfigError("give either a recipe or --resume RUN_DIR, not both")
        result = resume(args.resume, args.overrides)
    else:
        if not args.recipe:
            raise ConfigError("rlvr train needs a recipe (a file or a name from `rlvr recipes`)")
        result = run_training(load_config(find_recipe(args.recipe), args.overrides))
    if result.folder.writes:  # the other ranks of an FSDP run stay silent
        print(f"run folder: {result.folder.path}  (steps {result.steps}, {result.train_seconds / 60:.1f} min)")
        print(f"reward curve: {result.folder.reward_curve}")
    return 0


def demo(args: argparse.Namespace) -> int:
    overrides = [f"run.name=demo-{timestamp()}", *args.overrides]
    config = load_config(recipes_dir() / "demo.toml", overrides)
    print(f"rlvr demo: GRPO on {config.model.path}, {config.task.kind} task, "
          f"{config.train.steps} steps (at most {config.train.time_limit_s:.0f} s of training)")
    r = run_training(config, eval_full=True)
    gain = (r.accuracy_after - r.accuracy_before) * 100
    print(f"held-out greedy accuracy: {r.accuracy_before:.1%} -> {r.accuracy_after:.1%} "
          f"({gain:+.1f} points) after {r.steps} steps, {r.train_seconds / 60:.1f} min of training")
    print(f"run folder:   {r.folder.path}")
    print(f"reward curve: {r.folder.reward_curve}")
    return 0


def recipe_summary(path: Path) -> str:
    """The recipe's first comment line, e.g. `# GRPO (arXiv:2402.03300): ...`."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            return line.lstrip("# ").strip()
    return ""


def recipes(args: argparse.Namespace) -> int:
    if args.action == "show":
        if not args.name:
            raise ConfigError("rlvr recipes show NAME")
        print(dump_config(load_config(find_recipe(args.name))), end="")
        return 0
    for path in sorted(recipes_dir().glob("*.toml")):
        print(f"{path.stem:12s} {recipe_summary(path)}")
    return 0
