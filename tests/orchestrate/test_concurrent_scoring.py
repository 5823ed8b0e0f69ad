"""Scoring a batch on N workers (rewards/concurrent.py via orchestrate/scoring.py): the same
scored groups and counts as the serial loop, bit for bit, in the batch's order, on threads,
processes and async functions; calls really overlap; a per-call time limit fails only the
slow call."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from rlvr.config import load_config
from rlvr.errors import ConfigError, RewardError
from rlvr.orchestrate.scoring import concurrency_of, score_groups
from rlvr.rewards.concurrent import SERIAL, Concurrency
from rlvr.types import Rollout, Sample

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import concurrent_rewards as cr  # noqa: E402

SAMPLES = [Sample(f"{i}+{i}=", str(2 * i), source=f"data.jsonl:{i}") for i in range(6)]


def rollouts(texts_per_sample: int = 5) -> list[list[Rollout]]:
    return [[Rollout((1,), (2,), (-0.1,), f"{i}-{j}", "stop") for j in range(texts_per_sample)] for i in range(6)]


@pytest.mark.parametrize("fn, how", [
    (cr.varied, Concurrency(4, "thread")), (cr.varied, Concurrency(16, "thread")),
    (cr.varied, Concurrency(2, "process")), (cr.varied_async, Concurrency(8)), (cr.varied_async, SERIAL)])
def test_any_pool_gives_the_serial_groups_and_counts_bit_for_bit(fn, how):
    batch = rollouts()
    serial = score_groups(cr.varied, SAMPLES, batch, on_error="zero")
    assert serial[1]["reward/errors"] > 0 and serial[1]["reward/flag_f0"] + serial[1]["reward/flag_f1"] > 0
    groups, counts = score_groups(fn, SAMPLES, batch, on_error="zero", how=how)
    strip = (lambda gs: [[(s.sample, s.rollout, s.reward, s.reason.replace("_async", ""), s.flags) for s in g]
                         for g in gs])
    assert strip(groups) == strip(serial[0]) and counts == serial[1]


def test_with_on_error_fail_the_first_error_in_batch_order_is_raised():
    batch = rollouts()
    with pytest.raises(RewardError) as serial:
        score_groups(cr.varied, SAMPLES, batch, on_error="fail")
    with pytest.raises(RewardError) as pooled:
        score_groups(cr.varied, SAMPLES, batch, on_error="fail", how=Concurrency(8, "thread"))
    assert str(pooled.value) == str(serial.value)


@pytest.mark.parametrize("fn", [cr.sleepy, cr.sleepy_async])
def test_sixteen_workers_overlap_sixteen_slow_calls(fn):
    batch = [[Rollout((1,), (2,), (-0.1,), f"{j}", "stop") for j in range(16)]]
    t0 = time.monotonic()
    groups, _ = score_groups(fn, SAMPLES[:1], batch, on_error="fail", how=Concurrency(16, "thread"))
    elapsed = time.monotonic() - t0
    assert [s.reward for s in groups[0]] == [1.0] * 16
    assert elapsed < 0.8, elapsed  # serial: 16 x 0.1 s = 1.6 s


@pytest.mark.parametrize("fn, how", [(cr.stuck_on_x, Concurrency(4, "thread", 0.2)),
                                     (cr.stuck_on_x_async, Concurrency(4, "thread", 0.2)),
                                     (cr.stuck_on_x, Concurrency(1, "thread", 0.2))])
def test_a_call_past_its_time_limit_fails_alone(fn, how):
    batch = [[Rollout((1,), (2,), (-0.1,), text, "stop") for text in ("a", "x", "b")]]
    t0 = time.monotonic()
    groups, counts = score_groups(fn, SAMPLES[:1], batch, on_error="zero", how=how)
    assert time.monotonic() - t0 < 2.5
    assert [s.reward for s in groups[0]] == [0.5, 0.0, 0.5] and counts["reward/errors"] == 1
    assert "timed out after 0.2 s" in groups[0][1].reason


def test_a_process_pool_refuses_an_unpicklable_function_in_one_line():
    with pytest.raises(ConfigError, match="score_pool = 'process' needs a picklable reward function"):
        score_groups(lambda r, g: 1.0, SAMPLES[:1], rollouts()[:1], on_error="fail", how=Concurrency(2, "process"))


def test_the_config_keys(tmp_path):
    recipe = Path(__file__).resolve().parents[2] / "recipes" / "grpo.toml"
    config = load_config(recipe, ["reward.score_workers=16", "reward.score_pool=process", "reward.call_timeout_s=2.5"])
    assert concurrency_of(config.reward) == Concurrency(16, "process", 2.5)
    for bad in ("reward.score_workers=0", "reward.score_pool=fibers", "reward.call_timeout_s=-1"):
        with pytest.raises(ConfigError, match=bad.split("=")[0].split(".")[1]):
            load_config(recipe, [bad])
