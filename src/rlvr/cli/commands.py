"""What each `rlvr` subcommand does, given its parsed arguments.

Only the config modules are imported here: a recipe is read and validated before torch and
transformers load (8-10 s), so that a misspelt key is reported at once.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from rlvr import names
from rlvr.config import dump_config, load_config
from rlvr.config.ranges import range_lines
from rlvr.errors import ConfigError

# The checkout rlvr runs from (as `rlvr.orchestrate.run.repo_root`, which imports torch).
REPO_ROOT = Path(__file__).resolve().parents[3]


def recipes_dir() -> Path:
    return REPO_ROOT / "recipes"


def load_heavy():
    """Import the training stack (torch, transformers) once the config has passed."""
    from transformers.utils import logging as hf_logging

    from rlvr import orchestrate

    hf_logging.disable_progress_bar()  # checkpoint saves would print a bar every step
    return orchestrate


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
        saved = args.resume / "config.toml"
        if saved.is_file():  # validated here too, so a bad override fails before torch loads
            load_config(saved, args.overrides)
        result = load_heavy().resume(args.resume, args.overrides, accept_data_change=args.accept_data_change)
    else:
        if args.accept_data_change:
            raise ConfigError("--accept-data-change goes with --resume RUN_DIR")
        if not args.recipe:
            raise ConfigError("rlvr train needs a recipe (a file or a name from `rlvr recipes`)")
        config = load_config(find_recipe(args.recipe), args.overrides)
        result = load_heavy().train(config)
    if result.folder.writes:  # the other ranks of an FSDP run stay silent
        print(f"run folder: {result.folder.path}  (steps {result.steps}, {result.train_seconds / 60:.1f} min)")
        print(f"reward curve: {result.folder.reward_curve}")
    return 0


def demo(args: argparse.Namespace) -> int:
    if getattr(args, "env", None) is not None:  # the tool-use demo (cli/demo_env.py)
        from rlvr.cli.demo_env import env_demo

        return env_demo(args, recipes_dir(), load_heavy)
    overrides = [f"run.name=demo-{time.strftime('%Y%m%d-%H%M%S')}", *args.overrides]
    config = load_config(recipes_dir() / "demo.toml", overrides)
    run_training = load_heavy().train
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


def explain(config) -> str:
    """TOML comments, one a registry-backed setting: its value and the registry's help for it."""
    lines = ["", "# what each choice means (rlvr/names.py):"]
    for registry in names.ALL:
        section, _, key = registry.key.partition(".")
        value = getattr(getattr(config, section, None), key, None) if " " not in registry.key else None
        if isinstance(value, str):  # a subset's key (reward.rubric.verifier) names no one value
            lines.append(f"#   {registry.key} = {value!r}: {registry.help(value)}")
    for name in ("task", "env"):  # the sections keyed on kind: the kind's own options
        section = getattr(config, name)
        lines.append(f"# [{name}] kind = {section.kind!r}: {' '.join(type(section).__doc__.split())}")
        for key, info in type(section).model_fields.items():
            if info.description:
                lines.append(f"#   {name}.{key} = {getattr(section, key)!r}: {info.description}")
    lines += kind_table_lines(config)
    lines.append("# the range each number takes (values outside are refused):")
    lines += range_lines(config, "")
    return "\n".join(lines) + "\n"


def kind_table_lines(config) -> list[str]:
    """The chosen kinds' own tables of [algo] and [reward] ([algo.gae], [reward.math], ...)."""
    from rlvr.config.algo_section import ALL_TABLES
    from rlvr.config.reward_section import REWARD_TABLES

    lines = []
    for name, tables in (("algo", ALL_TABLES), ("reward", REWARD_TABLES)):
        for kind in tables:
            table = getattr(getattr(config, name), kind)
            if table is None:
                continue
            lines.append(f"# [{name}.{kind}]: {' '.join(type(table).__doc__.split())}")
            lines += [f"#   {name}.{kind}.{key} = {getattr(table, key)!r}: {info.description}"
                      for key, info in type(table).model_fields.items() if info.description]
    return lines


def recipes(args: argparse.Namespace) -> int:
    if args.action == "show":
        if not args.name:
            raise ConfigError("rlvr recipes show NAME")
        config = load_config(find_recipe(args.name))
        print(dump_config(config), end="")
        if args.explain:
            from rlvr.orchestrate.plan import plan_run  # torch-free, but only needed when asked

            print(explain(config), end="")
            print("\n# the run plan:\n" + "".join(f"#   {line}\n" for line in plan_run(config).describe()), end="")
        return 0
    for path in sorted(recipes_dir().glob("*.toml")):
        print(f"{path.stem:12s} {recipe_summary(path)}")
    return 0
