"""prompts.jsonl, the per-prompt ledger (issue 26): across a kill and a resume, sync and async
with in-flight updates, every step trains on the prompts of the uninterrupted run: none
skipped, none trained twice."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from rlvr.config import load_config
from rlvr.orchestrate import resume, train

REPO = Path(__file__).resolve().parents[2]
SMALL = ["sampling.prompts_per_step=2", "sampling.group_size=2", "eval.size=0", "log.progress=none",
         "log.samples_per_step=0"]


def ledger(folder) -> list[list[str]]:
    rows = [json.loads(line) for line in (folder.path / "prompts.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == list(range(1, len(rows) + 1))
    return [r["prompts"] for r in rows]


@pytest.mark.parametrize("mode", [[], ["orchestrate.mode=async", "orchestrate.max_staleness=2",
                                       "orchestrate.inflight_updates=true"]])
def test_no_prompt_is_skipped_or_trained_twice_across_a_kill(tmp_path, mode):
    def run(name, *extra):
        return train(load_config(REPO / "recipes" / "grpo.toml",
                                 [f"run.output_dir={tmp_path}", f"run.name={name}", *SMALL, *mode, *extra])).folder

    whole = ledger(run("whole", "train.steps=5"))
    cut = run("cut", "train.steps=3", "checkpoint.every=2")
    # As a kill -9 after step 3's lines and before its checkpoint leaves the folder:
    for path in sorted((cut.checkpoints / "step_3").rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    (cut.checkpoints / "step_3").rmdir()
    cut.checkpointed.write_text('{"step": 2}\n')
    resumed = ledger(resume(cut.path, ["train.steps=5"]).folder)
    assert resumed == whole  # the same prompts, step by step: before the ledger, nothing showed it
    counts = Counter(p for step in resumed for p in step)
    assert len(resumed) == 5 and all(n == 1 for n in counts.values())  # 10 distinct prompts, each once
