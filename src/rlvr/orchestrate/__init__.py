"""Loops that wire engines, rewards, algo and train together."""

from rlvr.orchestrate.run import RunResult, resume, train

__all__ = ["RunResult", "resume", "train"]
