"""Load a user's dataset: one JSON object per line, `{"prompt": str, "answer": str}`.

Malformed rows fail with the file and line number; nothing is skipped silently. Blank lines
are allowed (they hold no row). Optional keys: `id`, `meta`.
"""

from __future__ import annotations

import json
from pathlib import Path

from rlvr.errors import DatasetError
from rlvr.types import Sample

REQUIRED = ("prompt", "answer")
ALLOWED = {*REQUIRED, "id", "meta"}


def load_jsonl(path: str | Path) -> list[Sample]:
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"{path}: dataset file not found")
    samples = []
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, start=1):
            if line.strip():
                samples.append(parse_row(line, f"{path}:{lineno}"))
    if not samples:
        raise DatasetError(f"{path}: dataset is empty (no rows)")
    return samples


def json_object(line: str, where: str, required: tuple[str, ...], allowed: set[str]) -> dict:
    """One jsonl line → its object, checked for required and unknown keys; DatasetError naming
    `where` (file:line) otherwise. Shared by every jsonl reader of rlvr."""
    try:
        row = json.loads(line)
    except json.JSONDecodeError as e:
        raise DatasetError(f"{where}: not valid JSON ({e.msg} at column {e.colno})") from None
    if not isinstance(row, dict):
        raise DatasetError(f"{where}: expected a JSON object, got {type(row).__name__}")
    missing = [k for k in required if k not in row]
    if missing:
        raise DatasetError(f"{where}: missing field {missing[0]!r} (each row needs {list(required)})")
    unknown = sorted(set(row) - allowed)
    if unknown:
        raise DatasetError(f"{where}: unknown field {unknown[0]!r} (allowed: {sorted(allowed)})")
    return row


def parse_row(line: str, where: str) -> Sample:
    row = json_object(line, where, REQUIRED, ALLOWED)
    prompt, answer = row["prompt"], row["answer"]
    if not isinstance(prompt, str) or not prompt.strip():
        raise DatasetError(f"{where}: field 'prompt' must be a non-empty string")
    if isinstance(answer, bool) or not isinstance(answer, (str, int, float)):
        raise DatasetError(f"{where}: field 'answer' must be a string or a number")
    answer = str(answer)
    if not answer.strip():
        raise DatasetError(f"{where}: field 'answer' is empty")
    return Sample(prompt=prompt, answer=answer, source=where)
