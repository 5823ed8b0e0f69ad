"""The producers' contract (orchestrate/producers.py) and the rollout source behind them, on
fakes: every group reaches the trainer once and in order, the async bound on staleness is
exact, a checkpoint stores the state before the next batch the trainer takes, and a
producer's failure reaches the trainer."""

from __future__ import annotations

import threading
import time
from collections import Counter
from types import SimpleNamespace

import pytest
import torch

from rlvr.config.schema import Config, RunSection, SamplingSection
from rlvr.orchestrate.producers import PRODUCERS, AsyncProducer, SyncProducer
from rlvr.orchestrate.rollouts import Produced, RolloutSource
from rlvr.orchestrate.watchdog import Watchdog
from rlvr.types import Rollout, Sample, Scored


class FakeSource:
    """Draw n is one group tagged (n, version of the weights the producer had pushed)."""

    def __init__(self, producer_ref: list, fail_at: int | None = None):
        self.drawn, self.producer_ref, self.fail_at = 0, producer_ref, fail_at

    def state(self) -> dict:
        return {"drawn": self.drawn}

    def close(self) -> None:
        self.closed = True

    def draw(self, step: int) -> Produced:
        if self.fail_at is not None and self.drawn == self.fail_at:
            raise RuntimeError("the engine fell over")
        producer = self.producer_ref[0]
        version = getattr(producer, "pushed_version", None)
        rollout = Rollout((1,), (2,), (-0.5,), "x", "stop", policy_version=version or 0)
        group = [Scored(Sample(f"p{self.drawn}", "1"), rollout, 1.0, "ok")]
        self.drawn += 1
        return Produced([group], Counter(), 0.25, 0.5, version or 0)


class FakeEngine:
    def __init__(self):
        self.loaded = []

    def load_weights(self, weights, version):
        self.loaded.append(version)

    def accept_inflight_weights(self, poll):
        self.poll = poll


def make(kind: str, steps: int, k: int = 0, fail_at: int | None = None):
    ref: list = []
    source = FakeSource(ref, fail_at)
    producer = PRODUCERS[kind](source, FakeEngine(), Watchdog(0, None), max_staleness=k, steps=steps)
    ref.append(producer)
    return producer, source


def drive(producer, steps: int, ahead: int | None = None):
    """The loop's side: take each step's batch, 'train', publish the new weights. With
    `ahead` = k, a slow trainer: before taking step s's batch it waits until the producer has
    drawn every batch it may (min(s + k, steps) of them), so the producer runs as far ahead as
    the bound lets it, however the threads are scheduled."""
    producer.start(0)
    taken = []
    try:
        for step in range(1, steps + 1):
            if ahead is not None:
                wait_until(lambda: producer.source.drawn >= min(step + ahead, steps))
            taken.append(producer.next(step))
            producer.publish({"w": torch.zeros(1)}, step)
    finally:
        producer.close()
    return taken


def wait_until(condition, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "the producer did not draw ahead in time"
        time.sleep(0.005)


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_every_group_reaches_the_trainer_once_and_in_order(kind):
    producer, _ = make(kind, steps=5)
    prompts = [s.sample.prompt for p in drive(producer, 5) for g in p.groups for s in g]
    assert prompts == [f"p{i}" for i in range(5)]


def test_sync_waits_for_generation_and_scoring_and_loads_each_steps_weights():
    producer, _ = make("sync", steps=3)
    taken = drive(producer, 3)
    assert [p.wait_s for p in taken] == [0.75] * 3  # generate_s + score_s
    assert producer.engine.loaded == [1, 2, 3]


@pytest.mark.parametrize("k", [0, 1, 2])
def test_async_draws_batch_i_only_from_the_weights_of_step_i_minus_k(k):
    """A slow trainer lets the producer run as far ahead as it may: the lag is exactly k."""
    producer, _ = make("async", steps=6, k=k)
    taken = drive(producer, 6, ahead=k)
    lags = [(step - 1) - p.policy_version for step, p in enumerate(taken, start=1)]
    assert max(lags) == k and min(lags) >= 0


def test_async_checkpoint_state_is_the_one_before_the_next_batch_the_trainer_takes():
    producer, source = make("async", steps=6, k=2)
    producer.start(0)
    try:
        producer.next(1)
        producer.publish({"w": torch.zeros(1)}, 1)
        # with the weights of step 1 and k = 2 the producer may draw batches 1, 2 and 3 ahead
        deadline = time.monotonic() + 5
        while source.drawn < 4 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.05)
        assert source.drawn == 4  # and no further
        assert producer.next_state() == {"drawn": 1}  # not the source's state now ({"drawn": 4})
    finally:
        producer.close()


def test_a_producers_failure_is_raised_to_the_trainer():
    producer, _ = make("async", steps=4, fail_at=2)
    with pytest.raises(RuntimeError, match="fell over"):
        drive(producer, 4)


def test_async_stops_at_the_last_step():
    producer, source = make("async", steps=3, k=3)
    drive(producer, 3)
    assert source.drawn == 3


def test_producers_registry_names_the_modes():
    assert PRODUCERS == {"sync": SyncProducer, "async": AsyncProducer}


class EchoEngine:
    """Completion j of a prompt is the text 'j'; every other contract member the source reads."""

    generator = torch.Generator().manual_seed(0)
    policy_version = 0

    def generate(self, prompts, n, params):
        return [[Rollout((1,), (2,), (-0.1,), str(j), "stop") for j in range(n)] for _ in prompts]


def test_the_rollout_source_draws_prompts_per_step_groups_of_group_size_each_prompt_once():
    config = Config(run=RunSection(seed=3), sampling=SamplingSection(prompts_per_step=3, group_size=2))
    train_set = [Sample(f"q{i}", str(i % 2), f"t#{i}") for i in range(7)]
    parts = SimpleNamespace(train_set=train_set, engine=EchoEngine(), sampling=None,
                            reward_fn=lambda response, gold: float(response == gold))
    source = RolloutSource(config, parts, Watchdog(0, None))
    produced = source.draw(1)
    assert len(produced.groups) == 3 and all(len(g) == 2 for g in produced.groups)
    prompts = [g[0].sample.prompt for g in produced.groups]
    assert len(set(prompts)) == 3 and all({s.sample.prompt for s in g} == {g[0].sample.prompt} for g in produced.groups)
    # rewards follow the verifier: completion "j" is right when it equals the gold
    assert [[s.reward for s in g] for g in produced.groups] == \
        [[float(str(j) == g[0].sample.answer) for j in range(2)] for g in produced.groups]
