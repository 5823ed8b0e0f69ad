"""`rlvr eval-judge`: run a judge over a labelled set (`judge_data.py`) and measure it
(`judge_metrics.py`).

A judge under test is an `Ask`: (prompt, response, question, reference) -> P(yes), the call a
GenRM judge answers (`rewards/judge/genrm.py`, `GenRMJudge.ask`). A pointwise row asks
`POINT_QUESTION` about its response. A pair is shown to the same judge as one response,
`pair_text(A, B)`, asked `PAIR_QUESTION`, once with A = chosen and once with A = rejected, so
that the judge's preference for a position shows up as a flip between the two orders.
`Ask = None` reads the scores precomputed in the file instead.

A reward under test (a reward function, a rubric, rules: `cli/judge_rewards.py`) is a
`RewardJudge` instead: it scores (prompt, response, gold) with no question. A pointwise row's
P(yes) is its score; a pair's responses are scored one by one, s_c and s_r, and
P(A better) = 0.5 + (s_A - s_B) / 2, the same comparison in either order (no position bias).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

from rlvr.errors import DatasetError, RewardError
from rlvr.evaluate import judge_metrics as jm
from rlvr.evaluate.judge_data import JudgeSet, PairRow, PointRow
from rlvr.rewards.judge.genrm import DEFAULT_QUESTION

Ask = Callable[[str, str, str, str], float]
POINT_QUESTION = DEFAULT_QUESTION
PAIR_QUESTION = "Is response A better than response B?"


@dataclass(frozen=True)
class RewardJudge:
    """A reward as the judge under test: score(prompt, response, gold) -> [0, 1]."""

    score: Callable[[str, str, str], float]
    name: str

    def checked(self, where: str, prompt: str, response: str, gold: str) -> float:
        return ask_checked(lambda p, r, q, g: self.score(p, r, g), where, prompt, response, "", gold)

    def pair(self, row: "PairRow") -> tuple[float, float]:
        """(P(A better) with A = chosen, with A = rejected)."""
        gold = gold_of(row)
        chosen = self.checked(row.where, row.prompt, row.chosen, gold)
        rejected = self.checked(row.where, row.prompt, row.rejected, gold)
        return 0.5 + (chosen - rejected) / 2, 0.5 + (rejected - chosen) / 2


def gold_of(row: "PointRow | PairRow") -> str:
    """What a reward checks a response against: the gold answer, else the reference."""
    return row.gold if row.gold is not None else row.reference


def pair_text(first: str, second: str) -> str:
    return f"Response A:\n{first}\nResponse B:\n{second}"


def split_pair(text: str) -> tuple[str, str]:
    """The inverse of pair_text, for function judges that compare the two responses."""
    head, sep, second = text.partition("\nResponse B:\n")
    if not sep or not head.startswith("Response A:\n"):
        raise ValueError("not a pair_text(...) string")
    return head.removeprefix("Response A:\n"), second


def ask_checked(ask: Ask, where: str, prompt: str, response: str, question: str, reference: str) -> float:
    """ask(...) checked to be a probability; a RewardError naming `where` otherwise."""
    try:
        answer = ask(prompt, response, question, reference)
    except RewardError as e:
        raise RewardError(f"{where}: {e}") from None
    try:
        p = float(answer)
    except (TypeError, ValueError):
        raise RewardError(f"{where}: the judge returned {answer!r}, not a probability in [0, 1]") from None
    if not 0.0 <= p <= 1.0:  # NaN fails this too
        raise RewardError(f"{where}: the judge returned {p!r}, not a probability in [0, 1]")
    return p


def _stored(value: float | None, where: str, field: str) -> float:
    if value is None:
        raise DatasetError(f"{where}: no {field!r} for --judge scores (give it, or pass a judge "
                           f"with --judge function:|model:|http:)")
    return value


def point_scores(rows: tuple[PointRow, ...], ask: Ask | RewardJudge | None) -> np.ndarray:
    """P(yes) of each pointwise row (N,)."""
    if ask is None:
        return np.array([_stored(r.p_yes, r.where, "judge_p_yes") for r in rows], dtype=float)
    if isinstance(ask, RewardJudge):
        return np.array([ask.checked(r.where, r.prompt, r.response, gold_of(r)) for r in rows], dtype=float)
    return np.array([ask_checked(ask, r.where, r.prompt, r.response, POINT_QUESTION, r.reference)
                     for r in rows], dtype=float)


def pair_scores(rows: tuple[PairRow, ...], ask: Ask | RewardJudge | None) -> tuple[np.ndarray, np.ndarray]:
    """(P(A better) with A = chosen, with A = rejected), each (P,)."""
    if ask is None:
        return (np.array([_stored(r.p_chosen_first, r.where, "judge_p_chosen_first") for r in rows], float),
                np.array([_stored(r.p_rejected_first, r.where, "judge_p_rejected_first") for r in rows], float))
    if isinstance(ask, RewardJudge):
        both = [ask.pair(r) for r in rows]
    else:
        both = [(ask_checked(ask, r.where, r.prompt, pair_text(r.chosen, r.rejected), PAIR_QUESTION, r.reference),
                 ask_checked(ask, r.where, r.prompt, pair_text(r.rejected, r.chosen), PAIR_QUESTION, r.reference))
                for r in rows]
    return np.array([a for a, _ in both], float), np.array([b for _, b in both], float)


def groups_of(rows: tuple[PointRow, ...], p: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Pointwise rows grouped by prompt, in file order; only groups of two or more responses."""
    members: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        members.setdefault(r.prompt, []).append(i)
    labels = np.array([r.label for r in rows], dtype=float)
    return [(p[idx], labels[idx]) for idx in map(np.array, members.values()) if idx.size >= 2]


def verifier_decisions(rows: tuple[PointRow, ...], verifier) -> tuple[np.ndarray, np.ndarray]:
    """(indices of the rows with a gold answer, the verifier's 0/1 decision on each)."""
    idx = np.array([i for i, r in enumerate(rows) if r.gold is not None], dtype=int)
    decisions = np.array([int(verifier(response=rows[i].response, gold=rows[i].gold).score >= 0.5)
                          for i in idx], dtype=int)
    return idx, decisions


def benchmark(data: JudgeSet, ask: Ask | RewardJudge | None, *, threshold: float = 0.5, bins: int = 10,
              verifier=None, seed: int = 0) -> tuple[dict, np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """Every metric that the rows allow → (results, pointwise scores (N,), pair scores)."""
    p = point_scores(data.points, ask)
    pairs = pair_scores(data.pairs, ask)
    out: dict = {"file": str(data.path), "threshold": threshold, "seed": seed}
    if data.points:
        y = np.array([r.label for r in data.points], dtype=int)
        out["pointwise"] = {**jm.classification(p, y, threshold, seed), **jm.calibration(p, y, bins)}
        if verifier is not None:
            idx, v = verifier_decisions(data.points, verifier)
            if idx.size:
                out["verifier_agreement"] = jm.agreement((p[idx] >= threshold).astype(int), v, y[idx])
        groups = groups_of(data.points, p)
        if groups:
            out["best_of_n"] = jm.best_of_n(groups, seed)
    if data.pairs:
        out["pairwise"] = jm.pairwise(*pairs, seed=seed)
    return out, p, pairs


def scored_rows(data: JudgeSet, p: np.ndarray, pairs: tuple[np.ndarray, np.ndarray]) -> list[dict]:
    """The rows with the judge's scores filled in: a file that `--judge scores` re-reads."""
    names = {"p_yes": "judge_p_yes", "p_chosen_first": "judge_p_chosen_first",
             "p_rejected_first": "judge_p_rejected_first"}
    out = []
    for row, scores in [*zip(data.points, ({"p_yes": x} for x in p)),
                        *zip(data.pairs, ({"p_chosen_first": a, "p_rejected_first": b} for a, b in zip(*pairs)))]:
        fields = {**asdict(row), **scores}
        del fields["where"]
        out.append({names.get(k, k): (float(v) if k in names else v) for k, v in fields.items()
                    if v is not None and v != ""})
    return out
