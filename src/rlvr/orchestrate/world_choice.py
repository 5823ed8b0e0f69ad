"""env.kind = "world": the world spec named by env.world, checked at load (rlvr.envs.worlds)."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from rlvr.envs.worlds import WORLDS, SpecError, WorldSpec
from rlvr.envs.worlds.check import check_spec
from rlvr.envs.worlds.env import WorldEnv
from rlvr.errors import ConfigError


def world_spec(name: str) -> WorldSpec:
    if name in WORLDS:
        return WORLDS[name]
    if ":" not in name:
        raise ConfigError(f"env.world = {name!r}: no such world (shipped: {', '.join(WORLDS)}; or "
                          "'package.module:SPEC')")
    module, _, attr = name.partition(":")
    try:
        spec = getattr(importlib.import_module(module), attr, None)
    except ImportError as err:
        raise ConfigError(f"env.world = {name!r}: cannot import {module!r} ({err})") from None
    if not isinstance(spec, WorldSpec):
        raise ConfigError(f"env.world = {name!r}: {module}.{attr} is not an rlvr.envs.worlds.WorldSpec")
    return spec


def world_env(e) -> tuple[Callable[[], WorldEnv], list[dict]]:
    """(a factory of episodes, the tool schemas) for the [env] section `e`; a bad spec is refused
    with its own line (SpecError names the spec line)."""
    spec = world_spec(e.world)
    try:
        check_spec(spec)
    except SpecError as err:
        raise ConfigError(f"env.world = {e.world!r}: {err}") from None

    def make() -> WorldEnv:
        return WorldEnv(spec, e.difficulty, e.distractors, e.noise)

    return make, make().tool_schemas()
