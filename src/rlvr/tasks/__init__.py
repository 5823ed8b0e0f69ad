"""Datasets of prompts with gold answers: procedural generators and file loaders."""

from rlvr.tasks.arithmetic import arithmetic_splits
from rlvr.tasks.jsonl import load_jsonl
from rlvr.tasks.sampler import PromptSampler

__all__ = ["PromptSampler", "arithmetic_splits", "load_jsonl"]
