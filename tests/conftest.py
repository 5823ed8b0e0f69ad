"""Shared fixtures: the shipped tiny model, loaded once per session."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "models" / "tiny-arith"


@pytest.fixture(scope="session")
def tiny_pair():
    from rlvr.engines.loading import load_model, load_tokenizer

    torch.set_num_threads(2)
    return load_model(TINY), load_tokenizer(TINY)


@pytest.fixture
def tiny_model(tiny_pair):
    """A private copy, so a test may train it."""
    return copy.deepcopy(tiny_pair[0])


@pytest.fixture
def tokenizer(tiny_pair):
    return tiny_pair[1]
