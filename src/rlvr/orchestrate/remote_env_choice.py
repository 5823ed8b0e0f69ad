"""env.kind = "openenv" and "emulated" -> their EnvSpec fields (orchestrate/env_choice.py):
the episode factory and the after-batch hook (the fault-rate limit; env/emulated, the flag of
an emulated run). docs/env-openenv.md."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from rlvr.config.sections_remote_env import EmulatedEnvSection, OpenEnvSection
from rlvr.envs.emulated import EmulatedEnv
from rlvr.envs.fault_rate import fault_metrics
from rlvr.envs.openenv_env import OpenEnvEnv, generic_client_class
from rlvr.errors import ConfigError
from rlvr.orchestrate.paths import resolve_path
from rlvr.rewards.judge import HttpJudgeBackend, ReasonParams

REPO = Path(__file__).resolve().parents[3]  # a recipe's relative paths: as model.path's


def openenv_spec(e: OpenEnvSection) -> dict:
    generic_client_class()  # the extra is missing: one line now, not a fault in every episode

    def make() -> OpenEnvEnv:
        return OpenEnvEnv(e.url, connect_timeout_s=e.connect_timeout_s, message_timeout_s=e.message_timeout_s,
                          observation_field=e.observation_field, action_field=e.action_field)

    return {"make_env": make,
            "after_batch": lambda episodes: fault_metrics(episodes, e.max_failure_rate, f"env.url = {e.url!r}")}


def spec_text(e: EmulatedEnvSection) -> str:
    if e.spec is not None:
        return e.spec
    path = resolve_path(e.spec_file, REPO)
    if not path.is_file():
        raise ConfigError(f"env.spec_file = {e.spec_file!r}: no such file (looked in the working directory and {REPO})")
    return path.read_text()


def emulator(e: EmulatedEnvSection) -> tuple[Callable[[str], str], str]:
    """(complete(text) -> the reply line, a name for the flag) of env.emulator."""
    params = ReasonParams(max_new_tokens=e.max_new_tokens, temperature=e.temperature, stop=("\n",))
    if e.emulator == "http":
        backend, name = HttpJudgeBackend(e.url, e.model, timeout_s=e.timeout_s), e.url
        return (lambda text: backend.reason(text, 1, params)[0]), name
    from rlvr.engines.loading import load_model, load_tokenizer
    from rlvr.orchestrate.judge_backend import TransformersJudgeBackend

    folder = resolve_path(e.model_path, REPO)
    local = TransformersJudgeBackend(load_model(folder), load_tokenizer(folder))
    lock = threading.Lock()  # the episodes step in threads; one in-process model samples one at a time

    def complete(text: str) -> str:
        with lock:
            return local.reason(text, 1, params)[0]

    return complete, str(folder)


def emulated_spec(e: EmulatedEnvSection) -> dict:
    spec, (complete, name) = spec_text(e), emulator(e)

    def after_batch(episodes: list) -> dict[str, float]:
        return {"env/emulated": 1.0, **fault_metrics(episodes, e.max_failure_rate, f"the emulator {name}")}

    return {"make_env": lambda: EmulatedEnv(spec, complete), "after_batch": after_batch}
