"""Disagreement mining: the prompts whose samples disagree, i.e. that the model has not settled.

For a prompt with n samples, c of them correct (p = c / n), and answer counts n_a:

    verdict entropy  H_v = -p log2 p - (1 - p) log2 (1 - p)         in [0, 1] bits
    answer entropy   H_a = -sum_a (n_a / n) log2 (n_a / n)           in [0, log2 n] bits

where "no answer found" counts as one more answer. A prompt disagrees when its verdicts are
mixed (0 < c < n): some samples right, some wrong, the prompts a group-relative advantage
learns from. Prompts that are all wrong (or all right) with scattered answers are counted
(`scattered_prompts`) but not listed: on a hard task that is nearly every prompt, and a list
of 499 of 500 prompts points at nothing. Disagreeing prompts are ranked by H_v (most balanced
at the top), then by H_a (more scattered answers first), then by their order in the task.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Sequence

from rlvr.evaluate.groups import PromptGroup

NO_ANSWER = "<no answer>"


def verdict_entropy(correct: int, n: int) -> float:
    """Binary entropy in bits of the pass rate c / n (0 for all-right or all-wrong)."""
    p = correct / n
    return 0.0 - sum(q * math.log2(q) for q in (p, 1.0 - p) if q > 0)  # 0.0 - : no "-0.0"


def answer_counts(group: PromptGroup) -> Counter:
    """How many samples gave each answer (by voting key); no answer counts as NO_ANSWER."""
    return Counter(m.key if m.key is not None else NO_ANSWER for m in group.members)


def answer_entropy(group: PromptGroup) -> float:
    """Shannon entropy in bits of the answer distribution of the group's n samples."""
    n = group.n
    return 0.0 - sum((k / n) * math.log2(k / n) for k in answer_counts(group).values())


def disagreement_row(group: PromptGroup) -> dict:
    """The jsonl record of one prompt: its scores, answer counts and every sample."""
    return {
        "prompt": group.prompt, "gold": group.gold, "source": group.source, "n": group.n,
        "correct": group.correct, "pass_rate": group.pass_rate,
        "verdict_entropy": verdict_entropy(group.correct, group.n),
        "answer_entropy": answer_entropy(group),
        "distinct_answers": len(answer_counts(group)),
        "answers": dict(answer_counts(group).most_common()),
        "samples": [{"response": m.response, "answer": m.answer, "score": m.score,
                     "correct": m.score >= 1.0, "mean_logprob": m.mean_logprob, "reason": m.reason}
                    for m in group.members],
    }


def mine_disagreements(groups: Sequence[PromptGroup]) -> list[dict]:
    """Rows of the disagreeing prompts, ranked (see the module docstring); each has a 1-based `rank`."""
    rows = [disagreement_row(g) for g in groups if 0 < g.correct < g.n]
    rows.sort(key=lambda r: (-r["verdict_entropy"], -r["answer_entropy"]))  # stable: task order
    return [{"rank": i + 1, **row} for i, row in enumerate(rows)]


def scattered_prompts(groups: Sequence[PromptGroup]) -> int:
    """Prompts whose verdicts agree (all right or all wrong) but whose answers scatter."""
    return sum(1 for g in groups if g.correct in (0, g.n) and len(answer_counts(g)) > 1)


def write_disagreements(rows: list[dict], path: Path) -> Path:
    """Write one JSON object per line to `path`."""
    with path.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    return path
