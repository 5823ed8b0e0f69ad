"""The process-wide random generators a run sets and a checkpoint carries: Python's `random`,
numpy's global generator and torch's CPU generator. A user's reward function that calls
`random.random()` or `np.random.rand()` is then reproducible from `run.seed`, and a resume
restores all three, so it continues the same sequence. (Engines draw from their own
`torch.Generator`, seeded per call; threads of one process share these generators.)
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import torch


def seed_global_generators(seed: int) -> None:
    """Seed `random` and numpy's global generator (torch's is seeded where the model is built);
    also the initializer for a worker process that runs user code."""
    random.seed(seed)
    np.random.seed(seed % (1 << 32))  # numpy's legacy seed is 32-bit


def rng_state() -> dict[str, Any]:
    return {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}


def set_rng_state(state: dict[str, Any], seed: int = 0) -> None:
    """Restore `rng_state()`'s; a checkpoint of an older rlvr has no numpy state: seeded instead."""
    random.setstate(state["python"])
    torch.set_rng_state(state["torch"])
    if "numpy" in state:
        np.random.set_state(state["numpy"])
    else:
        np.random.seed(seed % (1 << 32))
