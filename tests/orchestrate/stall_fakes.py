"""Deliberately stalled and slow parts for tests/orchestrate/test_watchdog.py, importable as
`reward.function = "stall_fakes:..."` once this folder is on sys.path (or PYTHONPATH)."""

from __future__ import annotations

import signal
import threading
import time

from rlvr.engines.base import Engine

RELEASE = threading.Event()  # set by the tests' teardown so that a blocked thread ends


def reward_stuck_forever(response: str, gold: str) -> float:
    """A reward function that never returns (a sandbox run that hangs)."""
    while not RELEASE.wait(3600):
        pass
    return 0.0


def reward_stuck_deaf(response: str, gold: str) -> float:
    """Never returns and blocks the watchdog's signal on its thread, like a thread held in C
    code that no signal interrupts: only the watchdog's final exit can end the process."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    return reward_stuck_forever(response, gold)


def reward_slow_but_moving(response: str, gold: str) -> float:
    """0.25 s per sample: slow, but every sample scored is progress."""
    time.sleep(0.25)
    return float(response.strip() == gold.strip())


class StuckEngine(Engine):
    """The run's engine, except that `generate` blocks forever (a generation that never ends)."""

    def __init__(self, inner: Engine):
        self.inner = inner

    @property
    def generator(self):
        return self.inner.generator

    def generate(self, prompts, n, params):
        reward_stuck_forever("", "")
        return self.inner.generate(prompts, n, params)

    def generate_ids(self, rows, params):
        reward_stuck_forever("", "")
        return self.inner.generate_ids(rows, params)

    def load_weights(self, state_dict, version: int) -> None:
        self.inner.load_weights(state_dict, version)

    @property
    def policy_version(self) -> int:
        return self.inner.policy_version
