"""Two models played on the same held-out tasks with the same episode seeds (`rlvr eval MODEL
--compare OTHER` on an environment recipe), as compare.py pairs two models' prompt groups.

Every difference is B minus A, task by task, with the paired bootstrap interval over tasks
that single-turn compare uses (confidence.paired_difference): for success@1 the per-task
values are c_A / k and c_B / k, for pass@k' the per-task 1 - C(k - c, k') / C(k, k').
Per-task changes are compare.prompt_changes' (solved: A never succeeds, B at least once;
lost: the reverse; better / worse / same by success rate c / k). Pure: no engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from rlvr.evaluate.compare import prompt_changes
from rlvr.evaluate.confidence import paired_difference
from rlvr.evaluate.episodes_eval import SUCCESS_THRESHOLD, TaskEpisodes, check_tasks
from rlvr.evaluate.passk import pass_at_k
from rlvr.evaluate.summary import EvalError


@dataclass(frozen=True)
class TaskRate:
    """A task as compare.prompt_changes reads a prompt group: c successes, rate c / k."""

    prompt: str
    gold: str
    correct: int
    pass_rate: float


def check_same_tasks(tasks_a: Sequence[TaskEpisodes], tasks_b: Sequence[TaskEpisodes]) -> None:
    """Both sides must hold the same tasks in the same order; else an EvalError naming the first mismatch."""
    if len(tasks_a) != len(tasks_b):
        raise EvalError(f"compare needs the same tasks on both sides, got {len(tasks_a)} and {len(tasks_b)}")
    for i, (a, b) in enumerate(zip(tasks_a, tasks_b)):
        if (a.prompt, a.gold, a.source) != (b.prompt, b.gold, b.source):
            raise EvalError(f"compare: task {i} differs ({a.source!r} {a.prompt!r} vs {b.source!r} {b.prompt!r})")


def compare_episodes(tasks_a: Sequence[TaskEpisodes], tasks_b: Sequence[TaskEpisodes], ks: Sequence[int], *,
                     threshold: float = SUCCESS_THRESHOLD, seed: int = 0) -> dict:
    """results.json's compare "diff": paired success@1 and pass@k differences (B - A), the
    per-task changes, and every task's successes on both sides."""
    check_same_tasks(tasks_a, tasks_b)
    n_a, n_b = check_tasks(tasks_a, ks), check_tasks(tasks_b, ks)
    c_a = [t.successes(threshold) for t in tasks_a]  # (P,) plain ints: results.json is JSON
    c_b = [t.successes(threshold) for t in tasks_b]

    def pass_k(n: int, c: list[int], k: int) -> np.ndarray:
        return np.array([pass_at_k(n, ci, k) for ci in c])

    def rates(tasks: Sequence[TaskEpisodes], c: list[int], n: int) -> list[TaskRate]:
        return [TaskRate(t.prompt, t.gold, ci, ci / n) for t, ci in zip(tasks, c)]

    diff = lambda a, b: paired_difference(a, b, seed=seed).as_dict()  # noqa: E731
    per_task = [{"source": t.source, "gold": t.gold, "successes_a": a, "successes_b": b,
                 "success_diff": b / n_b - a / n_a} for t, a, b in zip(tasks_a, c_a, c_b)]
    return {"success_at_1_diff": diff(np.array(c_a) / n_a, np.array(c_b) / n_b),
            "pass_at_k_diff": {str(k): diff(pass_k(n_a, c_a, k), pass_k(n_b, c_b, k)) for k in ks},
            "changes": prompt_changes(rates(tasks_a, c_a, n_a), rates(tasks_b, c_b, n_b)),
            "per_task": per_task}
