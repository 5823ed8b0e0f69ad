"""The labelled maths pairs of issue 15 (tests/rewards/data/math_pairs*.jsonl) and their scorer.

The data checks hold the set to its contract (README in that folder); the scorer checks run
benchmarks/math_verifier_accuracy.py on a few rows and on a pair that hangs.
"""

import importlib.util
import json
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "rewards" / "data"
FILES = {"dev": DATA / "math_pairs.jsonl", "holdout": DATA / "math_pairs_holdout.jsonl",
         "holdout2": DATA / "math_pairs_holdout2.jsonl"}


def _module(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SPLIT = _module(REPO / "scripts" / "split_math_pairs.py")
SCORER = _module(REPO / "benchmarks" / "math_verifier_accuracy.py")


def _rows(split: str) -> list[dict]:
    return [json.loads(line) for line in FILES[split].read_text().splitlines() if line.strip()]


DEV, HOLDOUT = _rows("dev"), _rows("holdout")
ALL = DEV + HOLDOUT
EVERY = ALL + _rows("holdout2")  # the second holdout (written fresh, its own file) joins the row checks


def test_every_row_has_the_schema():
    for row in EVERY:
        assert set(row) <= {"id", "category", "response", "gold", "label", "source", "note"}, row
        for field in ("id", "category", "response", "gold", "source"):
            assert isinstance(row[field], str), (row.get("id"), field)
        assert isinstance(row["label"], bool), row["id"]  # not 0/1: a bool, so json true/false
        assert row["source"].strip(), row["id"]
        assert row["gold"].strip(), row["id"]
        assert row["category"] in SPLIT.CATEGORIES, (row["id"], row["category"])


def test_ids_and_pairs_are_unique_across_the_files():
    ids = [row["id"] for row in EVERY]
    assert len(ids) == len(set(ids))
    pairs = [(row["response"], row["gold"]) for row in EVERY]
    assert len(pairs) == len(set(pairs))


def test_the_set_meets_its_size_and_balance_contract():
    assert len(ALL) >= 450
    assert sum(not row["label"] for row in ALL) / len(ALL) >= 0.35
    public = [row for row in ALL if not row["source"].startswith("written for rlvr")]
    assert len(public) / len(ALL) >= 0.60
    assert {row["category"] for row in ALL} == set(SPLIT.CATEGORIES)


def test_holdout_is_about_30_percent_of_every_category():
    for cat in SPLIT.CATEGORIES:
        n_dev = sum(row["category"] == cat for row in DEV)
        n_hold = sum(row["category"] == cat for row in HOLDOUT)
        # round(0.3 n) held out; with n >= 7 that is 2..3 of 7, i.e. between 20% and 40%
        assert n_hold == round(SPLIT.HOLDOUT_SHARE * (n_dev + n_hold)), cat
        assert n_dev > 0 and n_hold > 0, cat


def test_split_keeps_placed_rows_and_fills_the_holdout_share():
    dev = [{"id": f"d{i}", "category": "pi"} for i in range(7)]
    hold = [{"id": "h0", "category": "pi"}]
    new = [{"id": f"n{i}", "category": "pi"} for i in range(12)]
    SPLIT.assign(dev, hold, new)
    assert [r["id"] for r in dev[:7]] == [f"d{i}" for i in range(7)]  # old rows did not move
    assert hold[0]["id"] == "h0"
    assert len(hold) == round(0.3 * 20) and len(dev) + len(hold) == 20


def test_check_row_names_the_problem():
    good = {"id": "x", "category": "pi", "response": "r", "gold": "g", "label": True, "source": "s"}
    assert SPLIT.check_row(good) is None
    assert "label" in SPLIT.check_row({**good, "label": 1})
    assert "category" in SPLIT.check_row({**good, "category": "nope"})
    assert "source" in SPLIT.check_row({**good, "source": " "})


def test_scorer_runs_on_a_few_rows(tmp_path):
    rows = [
        {"id": "a", "category": "integers_decimals", "response": r"so \boxed{42}", "gold": "42",
         "label": True, "source": "t"},
        {"id": "b", "category": "integers_decimals", "response": r"so \boxed{41}", "gold": "42",
         "label": False, "source": "t"},
        {"id": "c", "category": "fractions", "response": r"$\frac{1}{2}$", "gold": "$0.5$",
         "label": True, "source": "t"},
    ]
    data, out = tmp_path / "few.jsonl", tmp_path / "out.json"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    argv = sys.argv
    sys.argv = ["scorer", "--file", str(data), "--json", str(out), "--misses"]
    try:
        SCORER.main()
    finally:
        sys.argv = argv
    figures = json.loads(out.read_text())
    assert figures["table"]["ALL"]["n"] == 3
    assert figures["table"]["ALL"]["math-verify"] == 100.0  # three plain cases it handles
    assert figures["table"]["on false pairs"]["n"] == 1
    assert figures["throughput"]["rlvr"]["pairs_per_s"] > 0


def test_a_hanging_pair_is_false_within_the_limit(monkeypatch):
    def sleepy():
        return lambda response, gold: time.sleep(30) if response == "hang" else response == gold

    monkeypatch.setitem(SCORER.CHECKERS, "sleepy", sleepy)
    side = SCORER.Side("sleepy", limit=0.5)
    t0 = time.perf_counter()
    assert side.score("hang", "1") == (False, pytest.approx(0.5, abs=0.4), True)
    assert time.perf_counter() - t0 < 5
    assert side.score("7", "7")[0] is True  # the worker was restarted after the kill
    side.stop()


def test_tabulate_counts_agreement_with_the_label():
    rows = [{"category": "pi", "label": True, "source": "written for rlvr (form: bare)"},
            {"category": "pi", "label": False, "source": "math-verify tests/x.py (huggingface/Math-Verify)"}]
    results = {"rlvr": {"verdicts": [True, True]}, "math-verify": {"verdicts": [False, False]}}
    table = SCORER.tabulate(rows, results)
    assert table["pi"] == {"n": 2, "rlvr": 50.0, "math-verify": 50.0}
    assert table["on true pairs"]["rlvr"] == 100.0 and table["on false pairs"]["rlvr"] == 0.0
    assert table["written for rlvr"] == {"n": 1, "rlvr": 100.0, "math-verify": 0.0}
    assert table["from Math-Verify's tests"]["n"] == 1 and "from other public suites" not in table
