"""env.kind = "custom": your own environment, named in the recipe (docs/environments.md).

    [env]
    kind = "custom"
    factory = "mypkg.kv:KVEnv"       # a class or function; called once per episode
    options = { keys = 3 }           # its keyword arguments: KVEnv(keys=3)

The factory is imported as `reward.function` is (rlvr.function_spec), so `rlvr train`, `rlvr
eval` of a run folder and `--resume` find it from config.toml alone. `rlvr.run(env=...)` names
a module-level class or function the same way; any other callable (a closure, a class made in
a function) is kept in this process's `IN_PROCESS` table under `python.object:NAME`, which
another process cannot read (resume with `rlvr.resume(run_dir, env=...)`).

At load one instance is made and checked: it must be an `rlvr.envs.Env`; options it does not
take are refused naming `env.options`. Its `tool_schemas()` are the run's tools for a chat
template. What `reset` and `step` return is checked on every call (rlvr.envs.contract).
"""

from __future__ import annotations

from collections.abc import Callable

from rlvr.envs.base import Env
from rlvr.errors import ConfigError
from rlvr.function_spec import import_function

IN_PROCESS_PREFIX = "python.object:"
IN_PROCESS: dict[str, Callable[..., Env]] = {}  # rlvr.run(env=...)'s unnamed factories, this process only


def factory_name(factory: Callable[..., Env], importable: str | None) -> str:
    """The env.factory string for `factory`: its "module:name" when importable (given by the
    caller, orchestrate.api.importable_name), else a key of `IN_PROCESS`."""
    if importable is not None:
        return importable
    key = f"{IN_PROCESS_PREFIX}{getattr(factory, '__qualname__', type(factory).__name__)}"
    while IN_PROCESS.get(key, factory) is not factory:  # two different objects of one name
        key += "_"
    IN_PROCESS[key] = factory
    return key


def resolve_factory(spec: str) -> Callable[..., Env]:
    where = f"env.factory = {spec!r}"
    if spec.startswith(IN_PROCESS_PREFIX):
        if spec not in IN_PROCESS:
            raise ConfigError(f"{where} was a Python object given to rlvr.run(env=...) in another process; pass "
                              "it again: rlvr.resume(run_dir, env=...)")
        return IN_PROCESS[spec]
    return import_function(spec, where, "'package.module:ClassOrFunction'")


def checked_factory(spec: str, options: dict) -> tuple[Callable[[], Env], Env]:
    """A no-argument factory of fresh episodes, and one instance made to check it."""
    factory = resolve_factory(spec)
    name = getattr(factory, "__qualname__", spec)
    try:
        probe = factory(**options)
    except TypeError as e:  # most often an option the factory does not take
        raise ConfigError(f"env.options = {options!r}: {name}(**env.options) raised TypeError: {e}") from None
    if not isinstance(probe, Env):
        raise ConfigError(f"env.factory = {spec!r}: {name}(**env.options) returned {type(probe).__name__}, "
                          "not an rlvr.envs.Env (subclass it and implement reset and step)")
    return (lambda: factory(**options)), probe
