"""Engines turn prompts into rollouts with log-probs and take new weights from the trainer."""

from rlvr.engines.base import Engine, SamplingParams
from rlvr.engines.hf import HFEngine

ENGINES = {"hf": HFEngine}

__all__ = ["ENGINES", "Engine", "HFEngine", "SamplingParams"]
