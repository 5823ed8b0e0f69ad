"""Labelled judgements for `rlvr eval-judge`: one JSON object per line, of two kinds.

    pointwise  {"prompt", "response", "label": 0 | 1}
    pairwise   {"prompt", "chosen", "rejected"}          (chosen is the better response)
    both, optional: "reference" (shown to the judge), "gold" (the answer the programmatic
                    verifier checks the response against), "source" (where the row's convention
                    comes from, e.g. "GSM8K-style"), "id"
    precomputed judge scores, read by `--judge scores`:
        pointwise  "judge_p_yes"                            P(yes: the response is correct)
        pairwise   "judge_p_chosen_first", "judge_p_rejected_first"
                   P(yes: response A is better than B) with A = chosen, then with A = rejected

Pointwise rows with the same prompt form one best-of-N group, in file order. A malformed row
stops the load with `file:line` and the field; nothing is skipped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from rlvr.errors import DatasetError
from rlvr.tasks.jsonl import json_object, read_lines

COMMON = {"prompt", "reference", "gold", "source", "id"}
POINT = {"response", "label", "judge_p_yes"}
PAIR = {"chosen", "rejected", "judge_p_chosen_first", "judge_p_rejected_first"}


def shipped_set() -> Path:
    """The small labelled set shipped with rlvr (`rlvr eval-judge` with no FILE)."""
    return Path(str(resources.files("rlvr.evaluate") / "data" / "judge_bench_small.jsonl"))


@dataclass(frozen=True)
class PointRow:
    where: str  # file:line
    prompt: str
    response: str
    label: int  # 1: the response is correct
    reference: str = ""
    gold: str | None = None
    source: str = ""
    id: object = None
    p_yes: float | None = None  # precomputed judge score


@dataclass(frozen=True)
class PairRow:
    where: str
    prompt: str
    chosen: str
    rejected: str
    reference: str = ""
    gold: str | None = None
    source: str = ""
    id: object = None
    p_chosen_first: float | None = None
    p_rejected_first: float | None = None


@dataclass(frozen=True)
class JudgeSet:
    path: Path
    points: tuple[PointRow, ...]
    pairs: tuple[PairRow, ...]


def load_judge_set(path: str | Path) -> JudgeSet:
    """Read every row of `path` (see the module docstring); DatasetError at the first bad one."""
    path = Path(path)
    points, pairs = [], []
    for line, where in read_lines(path, "judge benchmark"):
        row = parse_row(line, where)
        (points if isinstance(row, PointRow) else pairs).append(row)
    if not points and not pairs:
        raise DatasetError(f"{path}: no rows (the file is empty)")
    return JudgeSet(path, tuple(points), tuple(pairs))


def parse_row(line: str, where: str) -> PointRow | PairRow:
    """One line → a PointRow (it has "response") or a PairRow (it has "chosen", "rejected")."""
    row = json_object(line, where, ("prompt",), COMMON | POINT | PAIR)
    kinds = [name for name, fields in (("pointwise", POINT), ("pairwise", PAIR)) if fields & set(row)]
    if len(kinds) == 2:
        raise DatasetError(f"{where}: a row is pointwise (response, label) or pairwise (chosen, "
                           f"rejected), not both: it has {sorted((POINT | PAIR) & set(row))}")
    required = ("chosen", "rejected") if kinds == ["pairwise"] else ("response", "label")
    missing = [f for f in required if f not in row]
    if missing:
        raise DatasetError(f"{where}: missing field {missing[0]!r} (a {kinds[0] if kinds else 'pointwise'} "
                           f"row needs {['prompt', *required]})")
    if kinds == ["pairwise"]:
        return PairRow(where, _text(row, "prompt", where), _text(row, "chosen", where),
                       _text(row, "rejected", where), *_common(row, where),
                       _prob(row, "judge_p_chosen_first", where), _prob(row, "judge_p_rejected_first", where))
    label = row["label"]
    if isinstance(label, bool) or label not in (0, 1):
        raise DatasetError(f"{where}: field 'label' must be 0 or 1, got {label!r}")
    return PointRow(where, _text(row, "prompt", where), _text(row, "response", where, empty_ok=True),
                    int(label), *_common(row, where), _prob(row, "judge_p_yes", where))


def _common(row: dict, where: str) -> tuple[str, str | None, str, object]:
    gold = row.get("gold")
    if gold is not None and (isinstance(gold, bool) or not isinstance(gold, (str, int, float))
                             or not str(gold).strip()):
        raise DatasetError(f"{where}: field 'gold' must be a non-empty string or a number")
    reference = _text(row, "reference", where, empty_ok=True) if "reference" in row else ""
    source = _text(row, "source", where) if "source" in row else ""
    return reference, None if gold is None else str(gold), source, row.get("id")


def _text(row: dict, field: str, where: str, empty_ok: bool = False) -> str:
    value = row[field]
    if not isinstance(value, str):
        raise DatasetError(f"{where}: field {field!r} must be a string, got {type(value).__name__}")
    if not empty_ok and not value.strip():
        raise DatasetError(f"{where}: field {field!r} must not be empty")
    return value


def _prob(row: dict, field: str, where: str) -> float | None:
    value = row.get(field)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) \
            or not 0.0 <= value <= 1.0:
        raise DatasetError(f"{where}: field {field!r} must be a probability in [0, 1], got {value!r}")
    return float(value)
