"""Load a user's dataset: one JSON object per line, `{"prompt": str, "answer": str | number}`.

Malformed rows fail with the file and line number; nothing is skipped silently. Blank lines
are allowed (they hold no row); a UTF-8 byte-order mark before the first row is allowed.
Optional keys: `id` (a string or an integer), `meta` (any JSON).

Refused, each with the file, line and field (docs/tasks.md, "Bad rows"): bytes that are not
UTF-8 (with the byte offset), a key given twice in one object, NaN / Infinity / numbers that
overflow a float (1e400), integers too long to print, strings holding a lone surrogate
("\\ud800": not Unicode, so no tokenizer or UTF-8 file can hold them), booleans as answers.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Iterator

from rlvr.errors import DatasetError
from rlvr.types import Sample

REQUIRED = ("prompt", "answer")
ALLOWED = {*REQUIRED, "id", "meta"}
BOM = b"\xef\xbb\xbf"  # what some editors write before UTF-8 text


def load_jsonl(path: str | Path) -> list[Sample]:
    path = Path(path)
    samples = [parse_row(text, where) for text, where in read_lines(path, "dataset")]
    if not samples:
        raise DatasetError(f"{path}: dataset is empty (no rows)")
    return samples


def read_lines(path: Path, what: str = "file") -> Iterator[tuple[str, str]]:
    """(text, "file:line") of each non-blank line, decoded as UTF-8; DatasetError naming the
    file, the line and the byte offset in the file of the first byte that is not UTF-8."""
    try:
        f = path.open("rb")
    except FileNotFoundError:
        raise DatasetError(f"{path}: {what} file not found") from None
    except OSError as e:  # a folder, no permission...
        raise DatasetError(f"{path}: cannot read the {what} file ({e.strerror or e})") from None
    offset = 0
    with f:
        for lineno, raw in enumerate(f, start=1):
            skip = len(BOM) if lineno == 1 and raw.startswith(BOM) else 0
            text = decode_line(raw[skip:], f"{path}:{lineno}", offset + skip)
            offset += len(raw)
            if text.strip():
                yield text, f"{path}:{lineno}"


def decode_line(raw: bytes, where: str, offset: int = 0) -> str:
    """UTF-8 bytes → text; DatasetError naming the bad byte and its offset (`offset` is where
    the line starts in its file)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DatasetError(f"{where}: not valid UTF-8 (byte 0x{raw[e.start]:02x} at byte offset "
                           f"{offset + e.start}); save the file as UTF-8") from None


class _DuplicateKey(Exception):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    row = dict(pairs)
    if len(row) != len(pairs):
        seen: set[str] = set()
        raise _DuplicateKey(next(k for k, _ in pairs if k in seen or seen.add(k)))
    return row


def json_object(line: str | bytes, where: str, required: tuple[str, ...], allowed: set[str]) -> dict:
    """One jsonl line → its object, checked for required and unknown keys and for the values
    refused in the module docstring; DatasetError naming `where` (file:line) and the field
    otherwise. Shared by every jsonl reader of rlvr."""
    if isinstance(line, bytes):
        line = decode_line(line, where)
    try:
        row = json.loads(line, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as e:
        raise DatasetError(f"{where}: not valid JSON ({e.msg} at column {e.colno})") from None
    except _DuplicateKey as e:
        raise DatasetError(f"{where}: key {e.args[0]!r} appears twice in one object") from None
    except ValueError as e:  # an integer past Python's 4300-digit conversion limit
        raise DatasetError(f"{where}: not usable JSON ({str(e).split(';')[0]})") from None
    except RecursionError:
        raise DatasetError(f"{where}: not usable JSON (nested too deeply)") from None
    if not isinstance(row, dict):
        raise DatasetError(f"{where}: expected a JSON object, got {json_type(row)}")
    check_values(row, where)
    missing = [k for k in required if k not in row]
    if missing:
        raise DatasetError(f"{where}: missing field {missing[0]!r} (each row needs {list(required)})")
    unknown = sorted(set(row) - allowed)
    if unknown:
        raise DatasetError(f"{where}: unknown field {unknown[0]!r} (allowed: {sorted(allowed)})")
    return row


def check_values(row: dict, where: str) -> None:
    """DatasetError for the first non-finite number or lone surrogate anywhere in `row`, with
    its field path (`meta.steps[2]`). Iterative: JSON nested 900 deep is legal."""
    stack: list[tuple[str | None, Any]] = [(None, row)]  # None: the row itself
    while stack:
        name, value = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            shown = "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"
            raise DatasetError(f"{where}: field '{printable(name)}' is {shown} (a row may hold only finite numbers; "
                               f"NaN, Infinity and overflowing literals such as 1e400 are refused)")
        if isinstance(value, str):
            _check_text(value, f"field '{printable(name)}'", where)
        elif isinstance(value, dict):
            for k, v in reversed(value.items()):
                _check_text(k, "a key" if name is None else f"a key of field '{printable(name)}'", where)
                stack.append((k if name is None else f"{name}.{k}", v))
        elif isinstance(value, list):
            stack.extend((f"{name}[{i}]", v) for i, v in reversed(list(enumerate(value))))


def printable(name: str) -> str:
    """A field path with its unprintable characters escaped (a key may be "\\n" or "\\u2028"), so
    that one line stays one line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in name)


def _check_text(text: str, what: str, where: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise DatasetError(f"{where}: {what} holds a lone surrogate \\u{ord(text[e.start]):04x} at character "
                           f"{e.start} (not valid Unicode text)") from None


def parse_row(line: str, where: str) -> Sample:
    row = json_object(line, where, REQUIRED, ALLOWED)
    prompt, answer = row["prompt"], row["answer"]
    if not isinstance(prompt, str) or not prompt.strip():
        raise DatasetError(f"{where}: field 'prompt' must be a non-empty string")
    if isinstance(answer, bool) or not isinstance(answer, (str, int, float)):
        raise DatasetError(f"{where}: field 'answer' must be a string or a number, got {json_type(answer)}")
    answer = str(answer)
    if not answer.strip():
        raise DatasetError(f"{where}: field 'answer' is empty")
    row_id = row.get("id")
    if row_id is not None and (isinstance(row_id, bool) or not isinstance(row_id, (str, int))):
        raise DatasetError(f"{where}: field 'id' must be a string or an integer, got {json_type(row_id)}")
    return Sample(prompt=prompt, answer=answer, source=where)


def json_type(value: Any) -> str:
    """The JSON name of a parsed value's type: object, array, boolean, null..."""
    names = {dict: "an object", list: "an array", bool: "a boolean", type(None): "null", str: "a string",
             int: "an integer", float: "a number"}
    return names.get(type(value), type(value).__name__)
