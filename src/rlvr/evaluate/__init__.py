"""Evaluation of a policy on held-out prompts."""

from rlvr.evaluate.accuracy import greedy_accuracy

__all__ = ["greedy_accuracy"]
