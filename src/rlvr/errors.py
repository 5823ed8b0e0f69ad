"""Errors meant for the user: one line that names the problem and where it is.

The CLI prints `RlvrError` without a traceback; anything else is a bug and keeps its trace.
"""


class RlvrError(Exception):
    """A problem with the user's input (config, data, model folder, reward function)."""


class ConfigError(RlvrError):
    pass


class DatasetError(RlvrError):
    pass


class ModelLoadError(RlvrError):
    pass


class RewardError(RlvrError):
    pass


class NumericalError(RlvrError):
    """Training produced a non-finite number (gradient norm, weights); the run stops unsaved."""


class EnvContractError(RlvrError):
    """An environment broke the `Env` contract (rlvr.envs.contract): `reset` returned something
    other than a string, or `step` something other than a `StepResult`. A bug in the
    environment's code, so the run stops with one line naming the class and the method."""


class EnvFaultRateError(RlvrError):
    """Too many of a step's episodes ended by environment faults (a remote server down, slow or
    malformed: rlvr.envs.fault_rate): over env.max_failure_rate the run stops with one line."""
