"""SQL: the policy queries a SQLite database with the `sql(query)` tool, then answers.

A task's prompt is the question and its gold answer is a SQL query whose result is the right
answer (the task data names no value itself, so the database stays the single truth). The
answer turn (a turn without a tool call) scores 1 when it states the gold query's result:

    the result's values, row by row, each cell's text (a float that is whole as an integer),
    joined by ", "; the answer's text after an optional "Answer:" prefix, with its items split
    on commas and newlines; both compared as lists of items, case-folded and stripped.

So "Answer: 42" matches a one-cell result 42, and "Ann, Bob" matches the rows ("Ann",), ("Bob",)
in that order. The tool opens the database read-only for each call (SQLite's `mode=ro` URI;
threads never share a connection), returns at most `max_rows` rows, and aborts a query that
runs past `timeout_s` (a progress handler), so a query can neither write nor hang an episode.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from rlvr.envs.tool_env import ToolEnv
from rlvr.envs.tools import ToolBox
from rlvr.rewards.verdict import Verdict

SQL_INSTRUCTIONS = ('Query the database with <tool_call>{"name": "sql", "arguments": {"query": "SELECT ..."}}'
                    '</tool_call>. When you know the answer, reply "Answer: ..." with no tool call.\n')


def run_query(db: Path, query: str, max_rows: int, timeout_s: float) -> tuple[list[str], list[tuple]]:
    """(column names, up to `max_rows` rows) of a read-only query; raises sqlite3.Error."""
    deadline = time.monotonic() + timeout_s
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 1000)  # nonzero aborts
        cursor = conn.execute(query)
        rows = cursor.fetchmany(max_rows)
        return [d[0] for d in cursor.description or ()], rows
    finally:
        conn.close()


def sql_tool(db: Path, max_rows: int = 20, timeout_s: float = 2.0) -> Callable[[str], str]:
    def sql(query: str) -> str:
        """Run one read-only SQL query on the task's SQLite database and return its rows.

        Args:
            query: one SQLite statement, e.g. SELECT name FROM people WHERE age > 30
        """
        columns, rows = run_query(db, query, max_rows, timeout_s)
        lines = [" | ".join(columns)] + [" | ".join(_cell(v) for v in row) for row in rows]
        return "\n".join(lines) + (f"\n[first {max_rows} rows]" if len(rows) == max_rows else "")

    return sql


def _cell(value) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _items(text: str) -> list[str]:
    text = re.sub(r"^\s*answer\s*:", "", text.strip(), flags=re.IGNORECASE)
    return [item.strip().casefold() for item in re.split(r"[,\n]", text) if item.strip()]


class SqlAnswer:
    """The verifier of an answer against the gold query's result on `db` (see the module)."""

    def __init__(self, db: Path, timeout_s: float = 2.0):
        self.db, self.timeout_s = db, timeout_s

    def __call__(self, *, response: str, gold: str) -> Verdict:
        try:
            _, rows = run_query(self.db, gold, max_rows=10_000, timeout_s=self.timeout_s)
        except sqlite3.Error as e:  # the task's own query is broken: not the policy's fault
            raise ValueError(f"the gold query {gold!r} fails on {self.db}: {e}") from None
        want = [_cell(v).strip().casefold() for row in rows for v in row]
        got = _items(response)
        if got == want:
            return Verdict(score=1.0, reason="the gold query's result")
        return Verdict(score=0.0, reason=f"expected {', '.join(want)!r}, got {', '.join(got)!r}")


def sql_env(db: Path, *, parser: str = "json_tags", max_rows: int = 20, timeout_s: float = 2.0,
            instructions: str = SQL_INSTRUCTIONS) -> Callable[[], ToolEnv]:
    """A factory of `ToolEnv`s with the `sql(query)` tool on `db`, answers scored by `SqlAnswer`."""
    if not Path(db).is_file():
        raise FileNotFoundError(f"no SQLite database at {db}")
    toolbox = ToolBox([sql_tool(Path(db), max_rows, timeout_s)], parser=parser)
    verifier = SqlAnswer(Path(db), timeout_s)
    return lambda: ToolEnv(toolbox, verifier, instructions)
