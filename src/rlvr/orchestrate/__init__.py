"""Loops that wire engines, rewards, algo and train together.

`train`, `resume` and `RunResult` load their module (and torch) on first use, so that the
torch-free parts below (the run plan, orchestrate/plan.py) import without it."""

import importlib

__all__ = ["RunResult", "resume", "train"]


def __getattr__(name: str):
    if name not in __all__:
        raise AttributeError(f"module 'rlvr.orchestrate' has no attribute {name!r}")
    return getattr(importlib.import_module("rlvr.orchestrate.run"), name)
