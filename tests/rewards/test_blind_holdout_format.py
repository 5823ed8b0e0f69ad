"""Schema of the blind maths holdouts written on the README's categories, `math_pairs_holdout5.jsonl`
and `math_pairs_holdout6.jsonl` (format only, never scored here).

The rows are labelled by hand and scored once, elsewhere; this test checks only that the file
is well formed, so it deliberately does not import `rlvr.rewards`.
"""

import importlib.util
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "rewards" / "data"
# holdout number -> (at least this many rows, at least this many whole multi-paragraph responses)
HOLDOUTS = {5: (260, 0), 6: (300, 100)}
REQUIRED = {"id": str, "category": str, "response": str, "gold": str, "label": bool, "source": str}
OPTIONAL = {"note": str}


def _categories() -> tuple[str, ...]:
    # The category list lives in the split script (stdlib only); load it by path, not as rlvr.
    spec = importlib.util.spec_from_file_location("split_math_pairs", ROOT / "scripts" / "split_math_pairs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CATEGORIES


def row_errors(line: str, categories, n: int = 6) -> list[str]:
    """What is wrong with one line of the file (empty list: nothing)."""
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        return [f"not valid JSON ({exc.msg})"]
    if not isinstance(row, dict):
        return ["not a JSON object"]
    errors = [f"missing field {k!r}" for k in REQUIRED if k not in row]
    errors += [f"unknown field {k!r}" for k in row if k not in REQUIRED and k not in OPTIONAL]
    for key, kind in {**REQUIRED, **OPTIONAL}.items():
        if key in row and not isinstance(row[key], kind):
            errors.append(f"field {key!r} is {type(row[key]).__name__}, not {kind.__name__}")
    if isinstance(row.get("id"), str) and not re.fullmatch(rf"h{n}-\d{{3}}", row["id"]):
        errors.append(f"id {row['id']!r} is not h{n}-NNN")
    if isinstance(row.get("category"), str) and row["category"] not in categories:
        errors.append(f"category {row['category']!r} is not one of CATEGORIES")
    return errors


def file_errors(lines: list[str], categories, holdout: int = 6) -> list[str]:
    """Per-line schema errors plus duplicate ids and duplicate (response, gold) pairs."""
    errors, ids, pairs = [], {}, {}
    for n, line in enumerate(lines, 1):
        problems = row_errors(line, categories, holdout)
        errors += [f"line {n}: {p}" for p in problems]
        if problems:
            continue
        row = json.loads(line)
        if row["id"] in ids:
            errors.append(f"line {n}: id {row['id']} repeats line {ids[row['id']]}")
        ids.setdefault(row["id"], n)
        # whitespace-insensitive, as the README's uniqueness rule for the other holdouts
        pair = (" ".join(row["response"].split()), " ".join(row["gold"].split()))
        if pair in pairs:
            errors.append(f"line {n}: (response, gold) repeats line {pairs[pair]}")
        pairs.setdefault(pair, n)
    return errors


def lines_of(n: int) -> list[str]:
    return (DATA / f"math_pairs_holdout{n}.jsonl").read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("n", HOLDOUTS)
def test_file_is_well_formed(n):
    assert file_errors(lines_of(n), _categories(), n) == []


@pytest.mark.parametrize("n", HOLDOUTS)
def test_size_and_coverage(n):
    rows = [json.loads(line) for line in lines_of(n)]
    min_rows, min_whole = HOLDOUTS[n]
    assert len(rows) >= min_rows
    counts = {c: sum(r["category"] == c for r in rows) for c in _categories()}
    assert min(counts.values()) >= 6, counts
    share_false = sum(not r["label"] for r in rows) / len(rows)
    assert 0.35 <= share_false <= 0.45, share_false
    # holdout6's brief asked for >= 100 whole model responses (paragraphs of reasoning, then an answer)
    whole = sum("\n\n" in r["response"] and len(r["response"]) > 120 for r in rows)
    assert whole >= min_whole, whole


def test_checker_catches_malformed_rows():
    good = json.dumps({"id": "h6-000", "category": "pi", "response": "2", "gold": "2", "label": True,
                       "source": "x"})
    cats = _categories()
    assert file_errors([good], cats) == []
    assert file_errors(["{not json"], cats)[0].startswith("line 1: not valid JSON")
    assert file_errors([good, good.replace("h6-000", "h6-001")], cats) == [
        "line 2: (response, gold) repeats line 1"]
    assert file_errors([good, good.replace('"2", "gold"', '"3", "gold"')], cats) == [
        "line 2: id h6-000 repeats line 1"]
    assert row_errors(good.replace('"pi"', '"trig"'), cats) == ["category 'trig' is not one of CATEGORIES"]
    assert row_errors(good.replace("true", '"true"'), cats) == ["field 'label' is str, not bool"]
    assert row_errors(good.replace('"h6-000"', '"h4-000"'), cats) == ["id 'h4-000' is not h6-NNN"]
    assert row_errors(good.replace(', "source": "x"', ""), cats) == ["missing field 'source'"]
