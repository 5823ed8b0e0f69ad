"""The asynchronous producer playing environment episodes (recipes/env_guess_number.toml on
models/tiny-env): staleness 0 is the synchronous run bit for bit, staleness 1 trains on
batches one version old, in-flight updates split an episode between versions token by token,
and a resumed run redraws the batch that was pending at its checkpoint."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pytest

from rlvr.config import load_config
from rlvr.envs.episodes import EpisodeRunner
from rlvr.orchestrate import resume, train
from rlvr.orchestrate.learner import Learner
from rlvr.orchestrate.producers import AsyncProducer

REPO = Path(__file__).resolve().parents[2]
SMALL = ["sampling.prompts_per_step=2", "sampling.group_size=4", "log.progress=none", "checkpoint.every_minutes=0",
         "train.steps=3"]
ASYNC = "orchestrate.mode=async"


def config(tmp_path, name: str, *extra: str):
    return load_config(REPO / "recipes" / "env_guess_number.toml",
                       [f"run.output_dir={tmp_path}", f"run.name={name}", *SMALL, *extra])


def comparable(rows: list[dict]) -> list[dict]:
    """The metrics lines without timings (and the staleness, which the async run alone has)."""
    return [{k: v for k, v in r.items() if not (k.startswith(("time/", "throughput/")) or k.endswith("_s"))}
            for r in rows]


class Seen(list):
    delay_s = 0.0


@pytest.fixture
def learned(monkeypatch):
    """The groups each training step trained on, taken at the learner (after `delay_s`)."""
    seen, learn = Seen(), Learner.learn

    def recording(self, groups, steps_done):
        time.sleep(seen.delay_s)  # a slower trainer: the producer surely gets ahead of it
        seen.append(groups)
        return learn(self, groups, steps_done)

    monkeypatch.setattr(Learner, "learn", recording)
    return seen


def rollouts(groups):
    return [s for g in groups for s in g]


def test_staleness_0_equals_the_sync_run_bit_for_bit(tmp_path):
    sync = train(config(tmp_path, "sync")).folder.read_metrics()
    async0 = train(config(tmp_path, "async0", ASYNC)).folder.read_metrics()
    assert [r["step"] for r in async0] == [1, 2, 3]
    assert comparable(async0) == comparable(sync)
    assert any(r["env/turns_mean"] > 1 for r in sync)  # multi-turn episodes were played
    assert all(r["async/staleness"] == 0 for r in async0)


def test_staleness_1_trains_on_batches_one_version_old(tmp_path, learned):
    learned.delay_s = 0.3
    rows = train(config(tmp_path, "k1", ASYNC, "orchestrate.max_staleness=1")).folder.read_metrics()
    assert [r["step"] for r in rows] == [1, 2, 3]
    for step, (row, groups) in enumerate(zip(rows, learned), start=1):
        versions = [s.rollout.policy_version for s in rollouts(groups)]
        # What the learner got is what the metrics line says: trained from the weights of step - 1.
        assert row["async/staleness"] == step - 1 - min(versions)
        assert row["async/staleness_mean"] == pytest.approx(step - 1 - sum(versions) / len(versions))
        assert row["async/inflight_mixed_frac"] == 0  # no in-flight updates asked for
    # Batch 0 waits for nothing; batch i > 0 starts while step i trains, so on the weights of step i - 1.
    assert [r["async/staleness"] for r in rows] == [0, 1, 1]


def turn_spans(scored) -> list[range]:
    """The completion positions of each policy turn of one episode (from its record)."""
    spans, at = [], 0
    for t in scored.episode["turns"]:
        spans.append(range(at, at + t["policy_tokens"]))
        at += t["policy_tokens"] + t["observation_tokens"]
    return spans


def test_inflight_updates_give_an_episode_tokens_of_two_versions(tmp_path, learned, monkeypatch):
    """Every episode of batch i > 0 is held before its second turn until the trainer has
    published new weights (step i's), so its first turn comes from one version and the rest
    from the next; without in-flight updates the whole episode would stay on the first."""
    published = threading.Condition()
    versions = []
    publish, run, turn = AsyncProducer.publish, EpisodeRunner.run, EpisodeRunner.turn
    runs = {"n": 0}
    learned.delay_s = 0.3  # the producer starts batch i + 1 long before step i + 1 publishes

    def recording_publish(self, weights, version):
        publish(self, weights, version)
        with published:
            versions.append(version)
            published.notify_all()

    def counting_run(self, *args):
        runs["n"] += 1
        self.turns, self.start_version = 0, self.engine.policy_version
        return run(self, *args)

    def held_turn(self, live):
        self.turns += 1
        if runs["n"] > 1 and self.turns == 2:  # batch 0: the trainer waits for it, nothing to wait for
            with published:
                assert published.wait_for(lambda: versions and versions[-1] > self.start_version, timeout=60)
        turn(self, live)

    monkeypatch.setattr(AsyncProducer, "publish", recording_publish)
    monkeypatch.setattr(EpisodeRunner, "run", counting_run)
    monkeypatch.setattr(EpisodeRunner, "turn", held_turn)
    rows = train(config(tmp_path, "inflight", ASYNC, "orchestrate.max_staleness=1",
                        "orchestrate.inflight_updates=true")).folder.read_metrics()
    assert [r["step"] for r in rows] == [1, 2, 3]
    split = 0
    for step, groups in enumerate(learned[1:], start=2):
        for s in rollouts(groups):
            r, spans = s.rollout, turn_spans(s)
            per_token = r.token_versions or (r.policy_version,) * len(r.completion_ids)
            assert len(per_token) == len(r.completion_ids)
            assert r.policy_version == step - 2 == per_token[0]  # the episode began on step - 2's weights
            for k, span in enumerate(spans):
                assert {per_token[t] for t in span} == {step - 2 if k == 0 else step - 1}, (step, k)
                assert all(r.loss_mask[t] == 1 for t in span)
            split += len(spans) > 1
    assert split > 0  # some episode did play a second turn
    for row in rows[1:]:
        assert row["async/staleness"] == 1 and 0 < row["async/inflight_mixed_frac"] <= 1
        assert row["async/token_staleness_mean"] < row["async/staleness_mean"] == 1


def tasks_of(groups) -> list[tuple[str, str]]:
    return [(s.sample.source, s.sample.answer) for s in rollouts(groups)]


@pytest.mark.parametrize("k", [0, 1])
def test_a_killed_async_run_resumes_with_the_pending_batch(tmp_path, learned, k):
    """A checkpoint stores the source's state before the batch the trainer takes next (it may
    be generated already): the resumed run draws the same tasks at every step; with k = 0 it
    is the uninterrupted run, number for number."""
    every = [ASYNC, f"orchestrate.max_staleness={k}", "checkpoint.every=1", "checkpoint.keep=3"]
    whole = train(config(tmp_path, "whole", *every)).folder.read_metrics()
    whole_tasks = [tasks_of(g) for g in learned]
    folder = train(config(tmp_path, "killed", *every)).folder
    shutil.rmtree(folder.checkpoints / "step_3")  # killed during step 3: step 2's checkpoint is the newest
    del learned[:]
    resumed = resume(folder.path).folder.read_metrics()
    assert [r["step"] for r in resumed] == [1, 2, 3]
    assert [tasks_of(g) for g in learned] == whole_tasks[2:]  # step 3 trained on step 3's tasks
    if k == 0:
        assert comparable(resumed) == comparable(whole)
