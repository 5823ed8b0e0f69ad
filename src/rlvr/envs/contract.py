"""What the runner checks of every value an environment hands back (docs/environments.md,
"The contract"): `reset` returns the first observation as a string, `step` a `StepResult`
whose observation is a string and whose reward is a finite number.

A value that breaks this is a bug in the environment, not a fault of one episode, so it raises
`EnvContractError` (one line naming the class and the method) instead of ending the episode
with `env_error`: otherwise the runner would fail later with an unrelated message (a `str` has
no `.reward`; a tokenizer given `None`), or every episode would quietly score 0.
"""

from __future__ import annotations

import math
from numbers import Real

from rlvr.envs.base import Env, StepResult
from rlvr.errors import EnvContractError


def _where(env: Env | None, method: str) -> str:
    return f"{type(env).__name__}.{method}"


def first_observation(env: Env | None, value: object) -> str:
    """`value`, what `env.reset` returned, if it is a string; else EnvContractError."""
    if not isinstance(value, str):
        raise EnvContractError(f"{_where(env, 'reset')} returned {type(value).__name__} {value!r:.60}; it must "
                               "return the first observation as a str (rlvr.envs.Env)")
    return value


def step_result(env: Env | None, value: object) -> StepResult:
    """`value`, what `env.step` returned, if it is a well-formed StepResult; else EnvContractError."""
    where = _where(env, "step")
    if not isinstance(value, StepResult):
        raise EnvContractError(f"{where} returned {type(value).__name__} {value!r:.60}; it must return a "
                               "rlvr.envs.StepResult(observation, reward=..., done=...)")
    if not isinstance(value.observation, str):
        raise EnvContractError(f"{where} returned StepResult(observation={value.observation!r:.60}): the "
                               "observation must be a str ('' when done)")
    if isinstance(value.reward, bool) or not isinstance(value.reward, Real) or not math.isfinite(value.reward):
        raise EnvContractError(f"{where} returned StepResult(reward={value.reward!r:.60}): the reward must be "
                               "a finite number")
    return value
