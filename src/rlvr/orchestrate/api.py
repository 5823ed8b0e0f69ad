"""The Python entry points behind `import rlvr` (docs/python-api.md): the objects the CLI uses,
for notebooks and scripts.

    result = rlvr.run("grpo", overrides={"train.steps": 2}, reward=my_reward)

`run` is not called `train`, nor `make_config` `config`, because `rlvr.train` and `rlvr.config`
are packages: importing them (every run does) would replace a function of that name on `rlvr`.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Union

import tomli_w

from rlvr.config import Config, dump_config, load_config
from rlvr.config.load import apply_override, parse_override, validate
from rlvr.errors import ConfigError
from rlvr.orchestrate import run as runs
from rlvr.orchestrate.scoring import RewardFn, build_reward_fn

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

Recipe = Union[str, Path, Config, None]  # a recipe name ("grpo"), a TOML file, a Config, or the defaults
Overrides = Union[Sequence[str], Mapping[str, Any]]  # ["train.lr=3e-5"] or {"train.lr": 3e-5}
StepCallback = Callable[[int, dict[str, float]], None]


def override_lines(overrides: Overrides) -> list[str]:
    """`--set`-style lines; a mapping's values are written as TOML (strings quoted)."""
    if isinstance(overrides, Mapping):
        return [f"{key}={tomli_w.dumps({'v': value})[4:].strip()}" for key, value in overrides.items()]
    if isinstance(overrides, str):
        raise ConfigError(f"overrides={overrides!r}: give a list of 'section.key=value' strings or a dict")
    return list(overrides)


def make_config(recipe: Recipe = None, overrides: Overrides = ()) -> Config:
    """A validated config from a recipe name or file (as `rlvr train` reads it) or a Config,
    with overrides applied; errors are `ConfigError` lines naming the key."""
    lines = override_lines(overrides)
    if not isinstance(recipe, Config):
        return load_config(recipe_path(recipe) if recipe is not None else None, lines)
    text = dump_config(recipe)
    data = tomllib.loads(text)
    for item in lines:
        apply_override(data, item)
    return validate(data, text, "<Config>", {".".join(parse_override(item)[0]) for item in lines})


def recipe_path(recipe: str | Path) -> Path:
    """A file when one is there, else a recipe of the checkout's recipes/ by name."""
    path = Path(recipe)
    if path.is_file():
        return path
    named = runs.repo_root() / "recipes" / f"{str(recipe).removesuffix('.toml')}.toml"
    if named.is_file():
        return named
    known = ", ".join(sorted(p.stem for p in (runs.repo_root() / "recipes").glob("*.toml")))
    raise ConfigError(f"{recipe}: no such recipe file or name (recipes: {known})")


def importable_name(fn: Callable) -> str | None:
    """"module:name" when `fn` is a module-level function another process can import (so the
    run folder's config can name it), else None (a lambda, a closure, an object, __main__)."""
    module, name = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if not module or module == "__main__" or not name.isidentifier():
        return None
    try:
        found = getattr(importlib.import_module(module), name, None)
    except ImportError:
        return None
    return f"{module}:{name}" if found is fn else None


def run(recipe: Recipe = None, *, overrides: Overrides = (), reward: RewardFn | None = None,
        on_step: StepCallback | None = None, on_eval: StepCallback | None = None,
        eval_full: bool = False) -> runs.RunResult:
    """Train as `rlvr train` does and return its `RunResult` (folder, steps, accuracies).

    `reward`: any callable `(response, gold, **extra_columns) -> float | Verdict`, used in
    place of the recipe's verifier. A module-level function is also written into the run's
    config.toml as `reward.function`, so that `rlvr train --resume` finds it; any other
    callable is not (resume with `rlvr.resume(..., reward=...)`; RunResult.notes says so).
    `on_step(step, metrics)`: after every step; `on_eval(step, metrics)`: after the steps that
    evaluated (metrics hold `eval/accuracy`)."""
    notes, config = [], make_config(recipe, overrides)
    if reward is not None:
        name = importable_name(reward)
        # the rules of reward.function (e.g. no reward.template) hold for any callable
        checked = make_config(config, {"reward.function": name or "python.object:reward"})
        config = checked if name else config
        if name is None:
            notes.append(f"the reward {getattr(reward, '__name__', type(reward).__name__)} is a Python object: "
                         "config.toml does not name it; resume with rlvr.resume(run_dir, reward=...)")
    result = runs.train(config, eval_full=eval_full, reward_fn=reward, on_step=callbacks(on_step, on_eval))
    result.notes.extend(notes)
    return result


def resume(run_dir: str | Path, *, overrides: Overrides = (), reward: RewardFn | None = None,
           on_step: StepCallback | None = None, on_eval: StepCallback | None = None,
           accept_data_change: bool = False) -> runs.RunResult:
    """Continue a stopped run (as `rlvr train --resume RUN_DIR --set ...`); on data other than
    the run's only with `accept_data_change` (as --accept-data-change; recorded in data.json)."""
    return runs.resume(Path(run_dir), override_lines(overrides), reward_fn=reward,
                       on_step=callbacks(on_step, on_eval), accept_data_change=accept_data_change)


def callbacks(on_step: StepCallback | None, on_eval: StepCallback | None) -> StepCallback | None:
    if on_step is None and on_eval is None:
        return None

    def after_step(step: int, metrics: dict[str, float]) -> None:
        if on_step is not None:
            on_step(step, metrics)
        if on_eval is not None and "eval/accuracy" in metrics:
            on_eval(step, metrics)

    return after_step


def verifier(name: str = "math", **options: Any) -> RewardFn:
    """A built-in verifier as training builds it: `verifier("math")(response="... 42", gold="42")`.
    `options` are [reward] keys (template="boxed", math_timeout_s=1, ...)."""
    from rlvr.rewards.build import reward_section

    return build_reward_fn(reward_section(name, options, where="rlvr.verifier"))
