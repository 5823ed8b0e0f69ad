"""Every tool environment trains from a config through the public API (a step each, on the
tiny environment model): the wiring of env.kind = "sql" and "python_tool" to a run."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from rlvr.config import load_config
from rlvr.errors import ConfigError
from rlvr.orchestrate import train
from rlvr.rewards.sandbox import bwrap_unavailable

REPO = Path(__file__).resolve().parents[2]


def small(tmp_path, name: str) -> list[str]:
    return [f"run.output_dir={tmp_path}", f"run.name={name}", 'model.path="models/tiny-env"', "train.steps=1",
            "sampling.prompts_per_step=2", "sampling.group_size=2", "sampling.max_new_tokens=8", "eval.size=0",
            "log.progress=none", "env.max_total_tokens=256", 'env.instructions=""']


def questions(tmp_path) -> Path:
    tasks = tmp_path / "questions.jsonl"
    tasks.write_text("".join(json.dumps(row) + "\n" for row in [
        {"prompt": "Ann's age?", "answer": "SELECT age FROM people WHERE name = 'Ann'"},
        {"prompt": "Bob's age?", "answer": "SELECT age FROM people WHERE name = 'Bob'"}]))
    return tasks


def test_a_sql_run_plays_its_questions_on_the_database(tmp_path):
    db = tmp_path / "people.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE people (name TEXT, age INTEGER)")
        conn.executemany("INSERT INTO people VALUES (?, ?)", [("Ann", 3), ("Bob", 7)])
    config = load_config(None, [*small(tmp_path, "sql"), 'task.kind="jsonl"', f'task.train_path="{questions(tmp_path)}"',
                                'env.kind="sql"', f'env.db_path="{db}"'])
    folder = train(config).folder
    [row] = folder.read_metrics()
    assert row["env/episodes"] == 4.0 and row["env/stop/env_error"] == 0.0  # every gold query ran
    samples = [json.loads(line) for line in folder.samples.read_text().splitlines()]
    assert samples and all(s["episode"]["turns"] and s["gold"].startswith("SELECT") for s in samples)


def test_a_sql_run_without_its_database_names_the_key(tmp_path):
    config = load_config(None, [*small(tmp_path, "nodb"), 'task.kind="jsonl"', f'task.train_path="{questions(tmp_path)}"',
                                'env.kind="sql"', f'env.db_path="{tmp_path / "missing.sqlite"}"'])
    with pytest.raises(ConfigError, match="env.db_path = .*missing.sqlite.*: no such file"):
        train(config)


@pytest.mark.sandbox
@pytest.mark.skipif(bwrap_unavailable() is not None, reason=f"bubblewrap cannot sandbox here: {bwrap_unavailable()}")
def test_a_python_tool_run_scores_answers_with_the_reward_stack(tmp_path):
    config = load_config(None, [*small(tmp_path, "python"), 'env.kind="python_tool"'])
    folder = train(config).folder
    [row] = folder.read_metrics()
    assert row["env/episodes"] == 4.0 and row["env/stop/answered"] + row["env/stop/max_turns"] > 0
    samples = [json.loads(line) for line in folder.samples.read_text().splitlines()]
    assert all("episode" in s for s in samples)
