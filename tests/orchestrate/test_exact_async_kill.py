"""A kill -9 soak of an exact async run (orchestrate.exact, k = 1 and 2, in-flight updates):
killed at random moments, during checkpoint writes and during pruning, then resumed, it ends
with the uninterrupted run's metrics and final weights, bit for bit, and its prompt ledger
(prompts.jsonl) trains every prompt of the uninterrupted run once, none skipped or repeated."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the soak helpers of the sync kill -9 soak
from test_processes import kill_when, metrics, moments, start, train_args  # noqa: E402

from rlvr.train.checkpoint import list_checkpoints, verify_checkpoint  # noqa: E402

KEYS = ("reward/mean", "loss/policy", "train/grad_norm", "response/length_mean", "policy/entropy",
        "async/staleness_mean", "async/token_staleness_mean", "async/inflight_mixed_frac")
STEPS = 10


def exact_async(k: int) -> list[str]:
    return [f"train.steps={STEPS}", "checkpoint.every=1", "checkpoint.keep=2", "orchestrate.mode=async",
            f"orchestrate.max_staleness={k}", "orchestrate.inflight_updates=true", "orchestrate.exact=true",
            "sampling.min_new_tokens=12", "sampling.max_new_tokens=12", "log.samples_per_step=0"]


def ledger(run: Path) -> list[list[str]]:
    rows = [json.loads(line) for line in (run / "prompts.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == list(range(1, len(rows) + 1))
    return [r["prompts"] for r in rows]


def soak(tmp_path: Path, options: list[str], seed: int) -> list[str]:
    """Start, kill, resume until a run ends by itself; the kinds of the kills that hit."""
    run, hits = tmp_path / "soak", []
    for kind, ready in moments(run / "checkpoints", random.Random(seed)):
        fresh = not (run / "config.toml").exists()
        proc = start(tmp_path, *(train_args(tmp_path, "soak", *options) if fresh else ["train", "--resume", str(run)]))
        if not kill_when(proc, ready):
            assert proc.returncode == 0, proc.stderr.read()
            return hits
        hits.append(kind)
        assert all(verify_checkpoint(p) is None for p in list_checkpoints(run / "checkpoints"))
    last = start(tmp_path, "train", "--resume", str(run))
    assert last.wait(timeout=600) == 0, last.stderr.read()
    return hits


@pytest.mark.slow
@pytest.mark.parametrize("k", [1, 2])
def test_kill_9_soak_of_exact_async_resumes_to_the_uninterrupted_run(tmp_path, k):
    options = exact_async(k)
    whole = start(tmp_path, *train_args(tmp_path, "whole", *options))
    assert whole.wait(timeout=600) == 0, whole.stderr.read()
    hits = soak(tmp_path, options, seed=k)
    assert len(hits) >= 5, hits
    run = tmp_path / "soak"
    assert ledger(run) == ledger(tmp_path / "whole")
    trained = [p for step in ledger(run) for p in step]
    assert len(trained) == len(set(trained))  # none trained twice (and, by the equality, none skipped)
    a, b = metrics(tmp_path / "whole"), metrics(run)
    assert [r["step"] for r in b] == list(range(1, STEPS + 1))
    assert [[r[key] for key in KEYS] for r in a] == [[r[key] for key in KEYS] for r in b]
    final_a = load_file(tmp_path / "whole" / "checkpoints" / f"step_{STEPS}" / "model.safetensors")
    final_b = load_file(run / "checkpoints" / f"step_{STEPS}" / "model.safetensors")
    assert final_a.keys() == final_b.keys() and all(torch.equal(final_a[key], final_b[key]) for key in final_a)
