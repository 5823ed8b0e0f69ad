"""env.curriculum = "failures" (rlvr.envs.failures): the bounded pool of failed tasks, what it
records, the mix it draws, its metrics and state; and a run that replays its failures."""

from __future__ import annotations

import random
from pathlib import Path
from types import SimpleNamespace

from rlvr.config import load_config
from rlvr.envs.failures import FailurePool
from rlvr.orchestrate import train
from rlvr.types import Sample

REPO = Path(__file__).resolve().parents[2]


def episode(success: bool, stop: str = "max_turns", observations=("3 is too low",), report=None):
    turns = [SimpleNamespace(observation=o) for o in observations]
    env = SimpleNamespace(report=lambda: report) if report is not None else None
    return SimpleNamespace(success=success, stop_reason=stop, trajectory=SimpleNamespace(turns=turns), env=env)


def task(i: int, **extra) -> Sample:
    return Sample(f"task {i}", str(i), f"t#{i}", extra)


def test_a_failed_task_enters_with_what_went_wrong_and_leaves_when_solved():
    pool = FailurePool(capacity=8, mix=0.5)
    bad = [episode(False, "max_tool_calls", ("ok", "error: bad arguments for set: missing ['key']")),
           episode(False, "max_tool_calls")]
    pool.observe(1, [(task(1, level=2), bad), (task(2), [episode(True, "solved"), episode(False)])])
    assert list(pool.entries) == [("t#1", "task 1", "1")]  # task 2 had a success: never entered
    f = pool.entries[("t#1", "task 1", "1")]
    assert (f.features, f.stop_reason, f.failing_call, f.turn, f.since) == ({"level": "2"}, "max_tool_calls", "set", 2, 1)
    assert f.failing_test is None  # no environment report
    m = pool.metrics(4)
    assert m["failures/pool_size"] == 1 and m["failures/unsolved_steps_mean"] == 3
    assert m["failures/stop/max_tool_calls"] == 1 and m["failures/tool/set"] == 1 and m["failures/feature/level=2"] == 1
    pool.observe(5, [(task(1, level=2), [episode(True, "solved")])])
    assert not pool.entries and pool.retired_steps == [4]


def test_the_pool_is_bounded_and_the_mix_replaces_a_share_of_the_batch():
    pool = FailurePool(capacity=3, mix=0.5)
    pool.observe(1, [(task(i), [episode(False)]) for i in range(5)])
    assert [k[0] for k in pool.entries] == ["t#2", "t#3", "t#4"]  # the oldest left first
    base = [task(100 + i) for i in range(4)]
    drawn = pool.mix(base, random.Random(0))
    assert len(drawn) == 4 and drawn[2:] == base[:2]  # round(0.5 * 4) = 2 places from the pool
    assert {s.source for s in drawn[:2]} <= {"t#2", "t#3", "t#4"} and pool.metrics(1)["failures/replayed"] == 2
    again = FailurePool(capacity=3, mix=0.5)
    again.load_state(pool.state())
    assert again.entries == pool.entries


def test_a_run_replays_its_failed_games(tmp_path):
    config = load_config(REPO / "recipes" / "env_guess_number.toml", [
        f"run.output_dir={tmp_path}", "train.steps=3", "sampling.prompts_per_step=4", "sampling.group_size=2",
        "log.progress=none", "checkpoint.every_minutes=0", "eval.size=0", 'env.curriculum="failures"',
        "env.failure_mix=0.5", "env.failure_fresh=0"])  # replay the rows (test_failure_synthesis.py: fresh)
    rows = train(config).folder.read_metrics()
    assert rows[0]["env/failures/replayed"] == 0  # nothing failed before step 1
    assert rows[0]["env/failures/pool_size"] > 0  # the untrained model loses most games
    assert rows[1]["env/failures/replayed"] == min(2, rows[0]["env/failures/pool_size"])
