"""Already generated samples from any system: one JSON object per line.

    {"prompt": str, "response": str, "gold": str | number}
    optional: "logprob" (mean token log-prob of the response, enables best-of-n by log-prob),
              "id", "meta" (kept out of the metrics),
              "cot_p" (P(reasoning right) in [0, 1] or true/false: read by --cot-judge samples,
              cot_judge.py; cot_judgements.jsonl carries it)

Rows with the same prompt form one group, in file order; every row of a prompt must carry the
same gold answer. Malformed rows fail with `file:line`; nothing is skipped. Blank lines hold
no row.
"""

from __future__ import annotations

import math
from pathlib import Path

from rlvr.errors import DatasetError
from rlvr.tasks.jsonl import json_object, read_lines
from rlvr.evaluate.groups import Graded, PromptGroup, Verify, grade

REQUIRED = ("prompt", "response", "gold")
ALLOWED = {*REQUIRED, "logprob", "id", "meta", "cot_p"}


def parse_sample_row(line: str, where: str) -> tuple[str, str, str, float | None]:
    """One jsonl line → (prompt, response, gold, logprob or None); DatasetError naming `where`."""
    row = json_object(line, where, REQUIRED, ALLOWED)
    prompt, response, gold = row["prompt"], row["response"], row["gold"]
    if not isinstance(prompt, str) or not prompt:
        raise DatasetError(f"{where}: field 'prompt' must be a non-empty string")
    if not isinstance(response, str):
        raise DatasetError(f"{where}: field 'response' must be a string, got {type(response).__name__}")
    if isinstance(gold, bool) or not isinstance(gold, (str, int, float)) or not str(gold).strip():
        raise DatasetError(f"{where}: field 'gold' must be a non-empty string or a number")
    return prompt, response, str(gold), _logprob(row.get("logprob"), where)


def _logprob(value: object, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or value > 0:
        raise DatasetError(f"{where}: field 'logprob' must be a number <= 0 (a mean log-prob)")
    return float(value)


def load_samples(path: str | Path, verify: Verify, extract: tuple[str, ...]) -> list[PromptGroup]:
    """Read, grade and group the samples of `path` (see the module docstring for the format)."""
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"{path}: samples file not found")
    rows: dict[str, list[Graded]] = {}
    gold_of: dict[str, tuple[str, str]] = {}  # prompt -> (gold, where it was first seen)
    for line, where in read_lines(path, "samples"):  # bad UTF-8: file, line and byte offset
        prompt, response, gold, logprob = parse_sample_row(line, where)
        first_gold, first_where = gold_of.setdefault(prompt, (gold, where))
        if gold != first_gold:
            raise DatasetError(f"{where}: gold {gold!r} differs from {first_gold!r} given for the "
                               f"same prompt at {first_where}")
        rows.setdefault(prompt, []).append(grade(response, gold, verify, extract, logprob))
    if not rows:
        raise DatasetError(f"{path}: no samples (the file has no rows)")
    return [PromptGroup(prompt=p, gold=gold_of[p][0], source=gold_of[p][1], members=tuple(m))
            for p, m in rows.items()]
