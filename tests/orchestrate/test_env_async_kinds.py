"""Every env.kind trains with the asynchronous producer and in-flight updates (two steps each
on the tiny environment model): the wiring, not the learning (guess_number's async guarantees
are tests/orchestrate/test_env_async.py's)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from rlvr.config import load_config
from rlvr.orchestrate import train
from rlvr.rewards.sandbox import bwrap_unavailable

REPO = Path(__file__).resolve().parents[2]
ASYNC = ["orchestrate.mode=async", "orchestrate.max_staleness=1", "orchestrate.inflight_updates=true"]


def small(tmp_path, model: Path = REPO / "models" / "tiny-env") -> list[str]:
    return [f"run.output_dir={tmp_path}", f'model.path="{model}"', "train.steps=2", "sampling.prompts_per_step=2",
            "sampling.group_size=2", "sampling.max_new_tokens=8", "eval.size=0", "log.progress=none",
            "checkpoint.every_minutes=0", "env.max_total_tokens=256", *ASYNC]


def sql_run(tmp_path) -> list[str]:
    db = tmp_path / "people.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE people (name TEXT, age INTEGER)")
        conn.executemany("INSERT INTO people VALUES (?, ?)", [("Ann", 3), ("Bob", 7)])
    tasks = tmp_path / "questions.jsonl"
    tasks.write_text("".join(json.dumps(row) + "\n" for row in [
        {"prompt": "Ann's age?", "answer": "SELECT age FROM people WHERE name = 'Ann'"},
        {"prompt": "Bob's age?", "answer": "SELECT age FROM people WHERE name = 'Bob'"}]))
    return [*small(tmp_path), 'task.kind="jsonl"', f'task.train_path="{tasks}"', 'env.kind="sql"',
            'env.instructions=""', f'env.db_path="{db}"']


def textarena_run(tmp_path) -> list[str]:
    pytest.importorskip("textarena", reason="textarena is the optional extra `envs`")
    # The game's first message is past tiny-env's 256 positions: a copy with 1024 (the wiring, not the play).
    model = tmp_path / "tiny-env-1024"
    shutil.copytree(REPO / "models" / "tiny-env", model)
    config = json.loads((model / "config.json").read_text())
    (model / "config.json").write_text(json.dumps({**config, "max_position_embeddings": 1024}))
    return [*small(tmp_path, model), 'task.kind="textarena"', 'env.kind="textarena"', 'env.game="GuessTheNumber-v0"',
            "env.max_total_tokens=1000", "env.max_turns=3", "task.train_size=20", "task.test_size=5",
            "sampling.max_new_tokens=4"]


sandboxed = pytest.mark.skipif(bwrap_unavailable() is not None, reason=f"no sandbox here: {bwrap_unavailable()}")
RUNS = {
    "single_turn": lambda tmp: [*small(tmp, REPO / "models" / "tiny-arith"), 'env.kind="single_turn"',
                                "env.max_total_tokens=64"],
    "sql": sql_run,
    "python_tool": lambda tmp: [*small(tmp), 'env.kind="python_tool"', 'env.instructions=""'],
    "textarena": textarena_run,
    "world": lambda tmp: [*small(tmp), 'env.kind="world"', 'env.world="calendar"', "env.distractors=1"],
    "custom": lambda tmp: [*small(tmp), 'env.kind="custom"', 'env.factory="kv_env:KVEnv"'],  # the tutorial's
}


@pytest.mark.parametrize("kind", [pytest.param(k, marks=[pytest.mark.sandbox, sandboxed]) if k == "python_tool" else k
                                  for k in RUNS])
def test_every_env_kind_trains_asynchronously(tmp_path, kind, monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "docs" / "examples"))  # kv_env
    rows = train(load_config(None, RUNS[kind](tmp_path))).folder.read_metrics()
    assert [r["step"] for r in rows] == [1, 2]
    assert all(r["env/episodes"] == 4.0 and r["loss/policy"] is not None for r in rows)
    assert rows[0]["async/staleness"] == 0 and rows[1]["async/staleness"] <= 1
