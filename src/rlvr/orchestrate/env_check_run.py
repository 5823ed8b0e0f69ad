"""`rlvr env check`'s environment: a recipe's [env] as a training run builds it, or a factory
named "package.module:Class" alone, with tasks, tool schemas and the renderer's token count
(rlvr.envs.check does the checking; docs/environments-reference.md, "rlvr env check")."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

from rlvr import names
from rlvr.config import Config, load_config
from rlvr.envs.base import Env
from rlvr.envs.render import renderer_for
from rlvr.errors import ConfigError
from rlvr.orchestrate.env_choice import ENV_BUILDERS, EnvSpec
from rlvr.orchestrate.scoring import build_reward_fn
from rlvr.types import Sample

REPO = Path(__file__).resolve().parents[3]


@dataclass
class EnvUnderCheck:
    config: Config
    spec: EnvSpec
    samples: list[Sample]
    count_tokens: Callable[[str], int]

    @property
    def make_env(self) -> Callable[[], Env]:
        return self.spec.make_env


def target_config(target: str, overrides: list[str]) -> Config:
    """A recipe file or name; or "package.module:Class" played as env.kind = "custom"."""
    from rlvr.orchestrate.api import recipe_path  # the Python API's lookup of recipe names

    if ":" in target and not Path(target).is_file():
        return load_config(None, ['env.kind="custom"', f'env.factory="{target}"', *overrides])
    return load_config(recipe_path(target), overrides)


def load_env(target: str, overrides: list[str] = (), n_tasks: int = 32) -> EnvUnderCheck:
    """Everything `check_env` needs, without loading model weights (the tokenizer only)."""
    from rlvr.engines.loading import load_tokenizer
    from rlvr.orchestrate.components import load_task, resolve_path

    config = target_config(target, list(overrides))
    if config.env.kind in names.SINGLE_TURN_KINDS and config.env.kind != "single_turn":
        raise ConfigError(f"{target}: env.kind = {config.env.kind!r} plays no environment; nothing to check")
    tokenizer = load_tokenizer(resolve_path(config.model.path, REPO))
    train, test = load_task(config, REPO, tokenizer)
    samples = (train or test)[:n_tasks]
    if not samples:
        raise ConfigError(f"{target}: the task has no rows to play")
    parts = SimpleNamespace(reward_fn=build_reward_fn(config.reward))  # what the builders read of a run
    spec = ENV_BUILDERS[config.env.kind](config, parts)
    renderer = renderer_for(tokenizer)
    return EnvUnderCheck(config, spec, samples, lambda text: len(renderer.prompt_ids(text, spec.tools)))
