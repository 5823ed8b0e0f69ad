"""rlvr's MathVerifier against bare math-verify on a hand-labelled set of answer forms.

tests/rewards/data/math_cases.jsonl holds one `{category, response, gold, label}` row per line
(label 1: the response's final answer equals the gold one). Every row must be judged right by
rlvr, except the known misses listed below with their reasons. Bare math-verify is called as
a naive user would (`verify(parse(gold), parse(response))`) and, more fairly, with the gold
wrapped in `$...$` so that its LaTeX extraction sees it. Print the table with

    python -m pytest tests/rewards/test_math_cases.py -q -s -k table
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from pathlib import Path

import math_verify
import pytest

from rlvr.rewards import MathVerifier

CASES = [
    json.loads(line)
    for line in (Path(__file__).parent / "data" / "math_cases.jsonl").read_text().splitlines()
    if line.strip()
]

KNOWN_MISSES = {
    "\\boxed{e^{i\\pi}}": "math-verify (sympy) does not simplify e^{i pi} to -1",
}


def bare_math_verify(response: str, gold: str, wrap_gold: bool = False) -> int:
    """1/0 from math-verify used directly; its own errors count as 0, as they would for a user."""
    gold = f"${gold}$" if wrap_gold else gold
    try:
        return int(bool(math_verify.verify(math_verify.parse(gold), math_verify.parse(response))))
    except Exception:  # deliberate: a crash in the baseline is a wrong judgement, not ours
        return 0


def case_id(case: dict) -> str:
    return f"{case['category']}:{case['response'][:40]}"


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(c, marks=pytest.mark.xfail(reason=KNOWN_MISSES[c["response"]], strict=True))
        if c["response"] in KNOWN_MISSES
        else c
        for c in CASES
    ],
    ids=case_id,
)
def test_rlvr_judges_every_case_right(case):
    verdict = MathVerifier()(response=case["response"], gold=case["gold"])
    assert verdict.score == case["label"], verdict.reason


def test_case_set_is_balanced_and_covers_every_category():
    categories = {case["category"] for case in CASES}
    assert len(CASES) >= 80
    assert {"mixed_number", "thousands", "currency", "percent", "repeating_decimal"} <= categories
    assert {"multiple_choice", "restated_question", "empty_box", "several_boxes"} <= categories
    assert {"integer", "fraction", "latex", "interval", "equation", "stuffed"} <= categories
    labels = [case["label"] for case in CASES]
    assert 0.2 < sum(labels) / len(labels) < 0.8


def accuracy_table() -> dict[str, list[int]]:
    """category -> [cases, rlvr right, bare right, bare-with-$gold$ right]; "all" included."""
    logging.disable(logging.WARNING)  # math-verify's per-call timeout warnings
    try:
        table: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
        verifier = MathVerifier()
        for case in CASES:
            response, gold, label = case["response"], case["gold"], case["label"]
            right = [
                1,
                int(verifier(response=response, gold=gold).score == label),
                int(bare_math_verify(response, gold) == label),
                int(bare_math_verify(response, gold, wrap_gold=True) == label),
            ]
            for key in (case["category"], "all"):
                table[key] = [a + b for a, b in zip(table[key], right)]
        return dict(table)
    finally:
        logging.disable(logging.NOTSET)


def test_table_rlvr_beats_bare_math_verify():
    table = accuracy_table()
    print("\n| category | cases | rlvr | bare math-verify | bare, gold in `$...$` |")
    print("|---|---|---|---|---|")
    for category, (n, ours, bare, wrapped) in sorted(table.items(), key=lambda kv: kv[0] == "all"):
        print(f"| {category} | {n} | {ours}/{n} | {bare}/{n} | {wrapped}/{n} |")
    n, ours, bare, wrapped = table["all"]
    assert ours == n - len(KNOWN_MISSES)
    assert ours > max(bare, wrapped)
    for category, (_, ours, bare, wrapped) in table.items():
        assert ours >= max(bare, wrapped), category


# --- the labelled pairs of issue 15 (dev split) ---------------------------------------------
# Built independently of the verifier (tests/rewards/data/README.md there). The holdout split
# is never read here: it is the independent check.

PAIRS = Path(__file__).parent / "data" / "math_pairs.jsonl"
PAIRS_MIN_ACCURACY = 0.97
PAIR_LIMIT_S = 1.0  # bare math-verify per pair; a time-out counts as False, as in the scorer


def bare_with_limit(response: str, gold: str) -> int:
    """Bare math-verify as a user calls it, cut after PAIR_LIMIT_S (its hangs count as 0)."""
    from rlvr.rewards import VerifierTimeout, run_with_time_limit

    try:
        return run_with_time_limit(bare_math_verify, PAIR_LIMIT_S, response, gold)
    except VerifierTimeout:
        return 0


@pytest.mark.skipif(not PAIRS.exists(), reason=f"{PAIRS.name} lands from the math-data branch")
def test_labelled_pairs_overall_and_per_category_at_least_bare_math_verify():
    from rlvr.config.schema import RewardSection
    from rlvr.orchestrate.scoring import build_reward_fn

    rows = [json.loads(line) for line in PAIRS.read_text().splitlines() if line.strip()]
    reward = build_reward_fn(RewardSection(verifier="math"))  # exactly as training builds it
    logging.disable(logging.WARNING)
    try:
        table: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
        misses = []
        for row in rows:
            ours = int(reward(response=row["response"], gold=row["gold"]).score >= 0.5) == int(row["label"])
            bare = bare_with_limit(row["response"], row["gold"]) == int(row["label"])
            for key in (row["category"], "all"):
                table[key][0] += 1
                table[key][1] += ours
                table[key][2] += bare
            if not ours:
                misses.append(row.get("id", row["response"][:40]))
    finally:
        logging.disable(logging.NOTSET)
    n, ours, _ = table["all"]
    assert ours / n >= PAIRS_MIN_ACCURACY, f"{ours}/{n}; misses: {misses}"
    behind = {cat: (o, b, c) for cat, (c, o, b) in table.items() if o < b}
    assert not behind, f"below bare math-verify (ours, bare, n): {behind}"
