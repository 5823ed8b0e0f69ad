"""Reward functions for tests/orchestrate/test_concurrent_scoring.py: importable by name, so
that a process pool's spawned workers can unpickle them."""

import asyncio
import hashlib
import sys
import time

from rlvr.rewards import Verdict


def varied(response, gold):
    """Deterministic, different per input: a float, a Verdict with flags, an error, an exit."""
    h = int(hashlib.sha256(f"{response}|{gold}".encode()).hexdigest(), 16)
    kind = h % 5
    if kind == 0:
        raise ValueError(f"no score for {response!r}")
    if kind == 1:
        sys.exit(h % 7)
    if kind == 2:
        return Verdict((h % 1000) / 999, f"r{h % 13}", flags=(f"f{h % 3}",))
    return (h % 997) / 996


async def varied_async(response, gold):
    await asyncio.sleep(0.001 * (hash(response) % 5))  # finish out of order
    return varied(response, gold)


def sleepy(response, gold):
    time.sleep(0.1)
    return 1.0


async def sleepy_async(response, gold):
    await asyncio.sleep(0.1)
    return 1.0


def stuck_on_x(response, gold):
    if response == "x":
        time.sleep(3)
    return 0.5


async def stuck_on_x_async(response, gold):
    if response == "x":
        await asyncio.sleep(3)
    return 0.5
