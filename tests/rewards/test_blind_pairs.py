"""The blind maths holdouts are well formed (tests/rewards/data/check_blind_pairs.py, which
imports nothing from rlvr), and the checker refuses a malformed row naming its line."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
spec = importlib.util.spec_from_file_location("check_blind_pairs", DATA / "check_blind_pairs.py")
checker = importlib.util.module_from_spec(spec)
spec.loader.exec_module(checker)


@pytest.mark.parametrize("path", checker.DEFAULT_PATHS, ids=lambda p: p.stem)
def test_each_blind_holdout_is_well_formed(path):
    rows, errors = checker.check(path)
    assert errors == [] and len(rows) >= 200
    assert 0.5 <= sum(r["label"] for r in rows) / len(rows) <= 0.7  # mostly true, many near misses


def test_a_bad_row_is_refused_with_its_file_and_line(tmp_path):
    good = {"id": "x-1", "category": "trig_log", "response": "r", "gold": "1", "label": True, "source": "s"}
    rows = [good, {**good, "id": "x-2", "label": "yes"}, {**good, "id": "x-3", "category": "nope"}, good]
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "{not json\n")
    _, errors = checker.check(path)
    assert [e.split(": ", 1)[0] for e in errors] == [f"{path}:{n}" for n in (2, 3, 4, 5)]
    assert "'label' must be true or false" in errors[0] and "unknown value 'nope'" in errors[1]
    assert "already used on line 1" in errors[2] and "not valid JSON" in errors[3]
