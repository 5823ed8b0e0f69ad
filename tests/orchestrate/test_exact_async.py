"""orchestrate.exact (orchestrate/exact_async.py): an async run at k = 1 and 2 with in-flight
updates gives the same numbers whatever the threads' timing, and a resume from a checkpoint
taken while batches were in flight gives the uninterrupted run's numbers and weights."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from rlvr.config import load_config
from rlvr.orchestrate import resume, train

REPO = Path(__file__).resolve().parents[2]
TINY = ["sampling.prompts_per_step=2", "sampling.group_size=2", "eval.size=4", "eval.every=2", "log.progress=none",
        "log.samples_per_step=0", "sampling.min_new_tokens=12", "sampling.max_new_tokens=12",
        "orchestrate.mode=async", "orchestrate.inflight_updates=true", "orchestrate.exact=true"]
KEYS = ("reward/mean", "loss/policy", "train/grad_norm", "policy/entropy", "response/length_mean", "eval/accuracy",
        "async/staleness", "async/staleness_mean", "async/token_staleness_mean", "async/inflight_mixed_frac")


def numbers(folder) -> list[list]:
    return [[row.get(k) for k in KEYS] for row in folder.read_metrics()]


def weights(folder, step: int) -> dict[str, torch.Tensor]:
    return load_file(folder.checkpoints / f"step_{step}" / "model.safetensors")


def same_weights(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def run(tmp_path, name, k, *extra):
    config = load_config(REPO / "recipes" / "grpo.toml", [f"run.output_dir={tmp_path}", f"run.name={name}", *TINY,
                                                          f"orchestrate.max_staleness={k}", *extra])
    return train(config).folder


def slowed(monkeypatch, where: str):
    """Slow the trainer ("train") or the engine's decode ("decode") by a sleep per call, so the
    two threads meet at other points than in an unslowed run."""
    from rlvr.engines.hf import HFEngine
    from rlvr.orchestrate.learner import Learner

    cls, name, pause = (Learner, "learn", 0.15) if where == "train" else (HFEngine, "_take_inflight_weights", 0.01)
    original = getattr(cls, name)

    def slow(self, *args, **kwargs):
        time.sleep(pause)
        return original(self, *args, **kwargs)
    monkeypatch.setattr(cls, name, slow)


@pytest.mark.parametrize("k", [1, 2])
def test_exact_async_gives_the_same_numbers_whatever_the_timing(tmp_path, monkeypatch, k):
    with monkeypatch.context() as m:
        slowed(m, "train")  # the producer runs ahead and waits for each in-flight update
        a = run(tmp_path, "slow-train", k, "train.steps=5")
    with monkeypatch.context() as m:
        slowed(m, "decode")  # the trainer waits; new weights exist long before a batch needs them
        b = run(tmp_path, "slow-decode", k, "train.steps=5")
    assert numbers(a) == numbers(b)
    assert same_weights(weights(a, 5), weights(b, 5))
    rows = a.read_metrics()
    assert [r["async/staleness"] for r in rows] == [min(i, k) for i in range(5)]  # batch i: weights of max(0, i - k)
    assert max(r["async/inflight_mixed_frac"] for r in rows) > 0  # in-flight updates did land
    assert max(r["async/inflight_wait_s"] for r in rows) > 0  # at forward E, waiting for the slow trainer


def ledger(folder) -> list[list[str]]:
    rows = [json.loads(line) for line in (folder.path / "prompts.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == list(range(1, len(rows) + 1))
    return [r["prompts"] for r in rows]


@pytest.mark.parametrize("k", [1, 2])
def test_exact_async_resume_equals_the_uninterrupted_run(tmp_path, monkeypatch, k):
    slowed(monkeypatch, "train")  # batches are in flight (made, not trained) at every checkpoint
    whole = run(tmp_path, "whole", k, "train.steps=5")
    cut = run(tmp_path, "cut", k, "train.steps=5", "checkpoint.every=2", "checkpoint.keep=3")
    # As a kill -9 during step 4 leaves the folder: the lines of steps 3 and 4, step 2's checkpoint.
    for step in (4, 5):
        for path in sorted((cut.checkpoints / f"step_{step}").rglob("*"), reverse=True):
            path.unlink() if path.is_file() else path.rmdir()
        (cut.checkpoints / f"step_{step}").rmdir()
    cut.checkpointed.write_text('{"step": 2}\n')
    resumed = resume(cut.path, []).folder
    # The ledger first: no prompt skipped or trained twice, and each step's the uninterrupted run's.
    trained = [p for step in ledger(resumed) for p in step]
    assert ledger(resumed) == ledger(whole) and len(trained) == len(set(trained)) == 10
    assert numbers(resumed) == numbers(whole)
    assert same_weights(weights(resumed, 5), weights(whole, 5))
