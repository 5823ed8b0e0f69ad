"""What an evaluation on repository episodes (env.kind = "repo") adds to results.json's summary.

From each episode's record (its `repo` entry: rlvr.envs.repo.env.RepoEnv.report), over the
tasks with k episodes each and c of them resolved (every FAIL_TO_PASS and PASS_TO_PASS test
passed, whatever the shaping term added to the reward):

    resolved@1      = mean over tasks of c / k
    resolved pass@k = mean over tasks of 1 - C(k - c, k) / C(k, k')   (Chen et al. 2021, eq. 1)
    test pass rate  = per "instance_id test_id": the share of the task's episodes in which it passed
    similarity      = mean patch similarity to the reference (episodes that have one)
    tampering       = per flag: the share of episodes the tampering monitor flagged

Turns, tool calls and stop reasons are the generic episode summary's (episodes_eval.py).
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

import numpy as np

from rlvr.evaluate.confidence import bootstrap_mean
from rlvr.evaluate.passk import pass_at_k


def _repo(outcome) -> dict:
    return (outcome.record or {}).get("repo") or {}


def has_repo_records(tasks: Sequence) -> bool:
    return any(_repo(o) for t in tasks for o in t.outcomes)


def repo_summary(tasks: Sequence, ks: Sequence[int], seed: int = 0) -> dict:
    """results.json's `model.repo` entry (see the module docstring); `tasks`: TaskEpisodes."""
    n = tasks[0].k
    c = np.array([sum(bool(_repo(o).get("resolved")) for o in t.outcomes) for t in tasks])  # (P,)
    passes: dict[str, list[float]] = {}
    for t in tasks:
        for o in t.outcomes:
            for test_id, passed in (_repo(o).get("tests") or {}).items():
                passes.setdefault(f"{_repo(o)['instance_id']} {test_id}", []).append(float(passed is True))
    episodes = [o for t in tasks for o in t.outcomes]
    similarities = [r["similarity"] for r in map(_repo, episodes) if r.get("similarity") is not None]
    flags = Counter(flag for o in episodes for flag in _repo(o).get("tampering", []))
    return {"resolved_at_1": bootstrap_mean(c / n, seed=seed).as_dict(),
            "resolved_pass_at_k": {str(k): bootstrap_mean(np.array([pass_at_k(n, int(ci), k) for ci in c]),
                                                         seed=seed).as_dict() for k in ks},
            "test_pass_rate": {test_id: sum(v) / len(v) for test_id, v in sorted(passes.items())},
            "tests_passed_share": float(np.mean([x for v in passes.values() for x in v])) if passes else 0.0,
            "similarity_mean": float(np.mean(similarities)) if similarities else None,
            "tampering": {flag: count / len(episodes) for flag, count in sorted(flags.items())},
            "tampered_episodes": sum(bool(_repo(o).get("tampering")) for o in episodes) / len(episodes)}
