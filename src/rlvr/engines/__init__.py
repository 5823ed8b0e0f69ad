"""Engines turn prompts into rollouts with log-probs and take new weights from the trainer."""

from rlvr.engines.base import Engine, SamplingParams
from rlvr.engines.hf import HFEngine

# The engine a config chooses: rlvr/orchestrate/engine_choice.py (ENGINE_BUILDERS).

__all__ = ["Engine", "HFEngine", "SamplingParams"]
