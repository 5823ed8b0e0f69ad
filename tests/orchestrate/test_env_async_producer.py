"""The async producer's side of environment runs, on fakes: in-flight updates reach a source
that plays episodes between their turns, and a failed producer's source is closed (an
environment's sandbox and step threads must not outlive the run)."""

from __future__ import annotations

from collections import Counter

import torch

from rlvr.orchestrate.producers import AsyncProducer
from rlvr.orchestrate.rollouts import Produced
from rlvr.orchestrate.watchdog import Watchdog


class TurnSource:
    """Like EpisodeSource: takes a loader of new weights for between turns; its draw fails
    when `fail` is set."""

    def __init__(self, fail: bool = False):
        self.fail, self.closed, self.between_turns = fail, False, None

    def accept_inflight_weights(self, load) -> None:
        self.between_turns = load

    def state(self) -> dict:
        return {}

    def draw(self, step: int) -> Produced:
        if self.fail:
            raise RuntimeError("the environment fell over")
        return Produced([], Counter(), 0.0, 0.0, 0)

    def close(self) -> None:
        self.closed = True


class Engine:
    def __init__(self):
        self.loaded, self.poll = [], None

    def load_weights(self, weights, version):
        self.loaded.append(version)

    def accept_inflight_weights(self, poll):
        self.poll = poll


def test_inflight_updates_load_new_weights_between_an_episodes_turns():
    source, engine = TurnSource(), Engine()
    producer = AsyncProducer(source, engine, Watchdog(0, None), max_staleness=1, inflight_updates=True, steps=2)
    assert source.between_turns is not None and engine.poll is not None
    source.between_turns()  # nothing published yet: nothing loaded
    producer.publish({"w": torch.zeros(1)}, 1)
    source.between_turns()
    source.between_turns()  # taken once
    assert engine.loaded == [1]


def test_no_inflight_updates_leave_the_turns_alone():
    source = TurnSource()
    AsyncProducer(source, Engine(), Watchdog(0, None), max_staleness=1, steps=2)
    assert source.between_turns is None


def test_a_failed_producers_source_is_closed_when_the_run_stops():
    source = TurnSource(fail=True)
    producer = AsyncProducer(source, Engine(), Watchdog(0, None), steps=2)
    producer.start(0)
    producer.thread.join(timeout=10)
    assert not producer.thread.is_alive() and producer.error is not None
    producer.close(wait=False)  # the loop's path when a step raises
    assert source.closed
