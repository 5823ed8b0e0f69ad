"""The SQL environment on a SQLite database made here: query, answer, scored by the gold query."""

from __future__ import annotations

import json
import sqlite3
import time

import pytest

from rlvr.engines.base import SamplingParams
from rlvr.envs import EpisodeLimits, EpisodeRunner, PlainRenderer
from rlvr.envs.sql_env import SqlAnswer, sql_env
from rlvr.types import Sample


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "shop.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE people (name TEXT, age INTEGER, city TEXT)")
        conn.executemany("INSERT INTO people VALUES (?, ?, ?)",
                         [("Ann", 34, "Oslo"), ("Bob", 27, "Rome"), ("Cid", 41, "Oslo"), ("Dee", 19, "Lima")])
    return path


def call(query: str) -> str:
    return '<tool_call>' + json.dumps({"name": "sql", "arguments": {"query": query}}) + '</tool_call>'


def play(engine, tok, db, samples, queries):
    """The policy sends queries[i] on turn 1, then answers with the rows it was shown."""
    with EpisodeRunner(engine, PlainRenderer(tok), SamplingParams(max_new_tokens=200),
                       EpisodeLimits(max_turns=3, max_total_tokens=4000, wall_s=30)) as runner:
        return runner.run(sql_env(db, instructions="", timeout_s=0.5), samples, list(range(len(samples))))


def answer_from(text: str) -> str:
    shown = text.rsplit("<obs>sql: ", 1)[1].split("</obs>")[0].splitlines()[1:]  # rows after the header
    return "Answer: " + ", ".join(shown)


def test_the_policy_queries_then_answers_and_is_scored_by_the_gold_query(scripted, char_tok, db):
    questions = {"Who lives in Oslo?": "SELECT name FROM people WHERE city = 'Oslo' ORDER BY name",
                 "How old is Bob?": "SELECT age FROM people WHERE name = 'Bob'"}
    mine = {"Who lives in Oslo?": "SELECT name FROM people WHERE city = 'Oslo' ORDER BY name",
            "How old is Bob?": "SELECT age FROM people WHERE name = 'Ann'"}  # the wrong row

    def policy(text: str) -> str:
        if "<obs>" not in text:
            return call(mine[text.strip()])
        return answer_from(text)

    samples = [Sample(q, gold) for q, gold in questions.items()]
    right, wrong = play(scripted(policy), char_tok, db, samples, mine)
    assert (right.stop_reason, right.reward, right.tool_calls) == ("answered", 1.0, 1)
    assert right.trajectory.turns[0].observation == "sql: name\nAnn\nCid"
    assert right.trajectory.turns[-1].action == "Answer: Ann, Cid"
    assert (wrong.stop_reason, wrong.reward) == ("answered", 0.0)


def test_bad_writing_and_endless_queries_become_observations(scripted, char_tok, db):
    bad = ["SELEC name FROM people", "DROP TABLE people",
           "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n"]
    turns = {}

    def policy(text: str) -> str:
        q = text.split("\n")[0].strip()
        turns[q] = turns.get(q, 0) + 1
        return call(q) if turns[q] == 1 else "Answer: 4"

    start = time.monotonic()
    episodes = play(scripted(policy), char_tok, db, [Sample(q, "SELECT count(*) FROM people") for q in bad], bad)
    observations = [ep.trajectory.turns[0].observation for ep in episodes]
    assert "syntax error" in observations[0]
    assert "readonly" in observations[1]
    assert "interrupted" in observations[2] and time.monotonic() - start < 10
    assert all(ep.metrics["tool/errors"] == 1 and ep.reward == 1.0 for ep in episodes)  # then answered right: 4 rows
    assert sqlite3.connect(db).execute("SELECT count(*) FROM people").fetchone() == (4,)  # nothing was dropped


@pytest.mark.parametrize("response, score", [("Answer: 27", 1.0), ("27", 1.0), ("answer: 27.0", 0.0), ("28", 0.0)])
def test_the_answer_states_the_gold_result(db, response, score):
    assert SqlAnswer(db)(response=response, gold="SELECT age FROM people WHERE name = 'Bob'").score == score


def test_a_broken_gold_query_is_the_task_s_fault_named(db):
    with pytest.raises(ValueError, match="the gold query 'SELECT nope' fails"):
        SqlAnswer(db)(response="1", gold="SELECT nope")
