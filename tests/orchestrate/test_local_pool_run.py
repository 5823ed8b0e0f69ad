"""`orchestrate.rollout_workers = N` on the local backend: a run samples with LocalPoolEngine
(rlvr.engines.local_pool) over the trainer's own weights, and is as repeatable as any sync run."""

from __future__ import annotations

import os
from pathlib import Path

from rlvr.config import load_config
from rlvr.engines.local_pool import LocalPoolEngine
from rlvr.orchestrate import resume, train
from rlvr.orchestrate.components import build
from rlvr.orchestrate.plan import plan_run

REPO = Path(__file__).resolve().parents[2]
QUICK = ["train.steps=3", "sampling.prompts_per_step=4", "sampling.group_size=4", "sampling.max_new_tokens=6",
         "eval.size=0", "log.progress=none", "checkpoint.every_minutes=0"]


def config_for(folder: Path, *overrides: str):
    return load_config(REPO / "recipes" / "demo.toml", [f"run.output_dir={folder}", *QUICK, *overrides])


def live_children() -> set[int]:
    """This process's children that are running (not zombies), from /proc."""
    out = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == os.getpid() and fields[0] != "Z":
                out.add(int(entry))
    return out


def test_the_setting_reaches_the_engine_and_the_engine_the_trainers_weights(tmp_path):
    parts = build(plan_run(config_for(tmp_path, "orchestrate.rollout_workers=3")), REPO)
    try:
        assert isinstance(parts.engine, LocalPoolEngine) and parts.engine.n_workers == 3
        assert parts.engine.model is parts.trainer.model  # a sync run: no copy, shared in place
        assert all(p.is_shared() for p in parts.trainer.model.parameters())
    finally:
        parts.engine.close()


def test_a_pooled_run_repeats_itself_and_differs_from_one_process(tmp_path):
    def metrics(name, workers):
        rows = train(config_for(tmp_path / name, f"orchestrate.rollout_workers={workers}")).folder.read_metrics()
        return [(r["step"], r["reward/mean"], r["loss/policy"], r["policy/entropy"], r["response/length_mean"]) for r in rows]

    before = live_children()
    pooled = metrics("a", 2)
    assert len(pooled) == 3
    assert live_children() <= before  # the run closed its engine: no worker outlives it
    assert metrics("b", 2) == pooled
    assert metrics("c", 1) != pooled  # another engine, other rollouts: the setting was not dropped


def rows(folder):
    return [(r["step"], r["reward/mean"], r["loss/policy"], r.get("eval/accuracy")) for r in folder.read_metrics()]


def test_an_exact_async_run_repeats_itself(tmp_path):
    """The pool in an async run: the engine's own copy of the weights, each version sent by
    load_weights. Without evaluation: with `eval.every` a pooled exact-async run did not repeat
    itself in 3 of 14 runs (untraced; rlvr/engines/local_pool.py says so)."""
    extra = ["orchestrate.rollout_workers=2", "orchestrate.mode=async", "orchestrate.max_staleness=1",
             "orchestrate.exact=true", "train.steps=4"]
    first = rows(train(config_for(tmp_path / "a", *extra)).folder)
    assert len(first) == 4
    assert rows(train(config_for(tmp_path / "b", *extra)).folder) == first


def test_a_resumed_pooled_run_continues_the_uninterrupted_one(tmp_path):
    extra = ["orchestrate.rollout_workers=2", "eval.size=8", "eval.every=2"]
    whole = rows(train(config_for(tmp_path / "whole", *extra, "train.steps=4")).folder)
    first = train(config_for(tmp_path / "split", *extra, "train.steps=2")).folder
    assert rows(resume(first.path, ["train.steps=4"]).folder) == whole
