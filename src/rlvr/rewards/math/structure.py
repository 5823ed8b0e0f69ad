"""The shape of an answer: one value, a bare list, a tuple, a set, an interval, a relation.

Pure string work, linear in the answer's length. `shape` says how two answers are to be
matched (a bare comma list and a set unordered, a tuple and an interval in order, with the
brackets of an interval part of its value); `as_interval` turns a one-variable inequality
into the interval it describes, so that "x > 3" equals "(3, \\infty)"; `assignment` reads
"x = 4" and "y = 2x + 1" as a named value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rlvr.rewards.math.normalize import top_level_items

_VARIABLE = r"(?:[a-zA-Z](?:_\{?\w+\}?)?|\\[a-z]+|[a-zA-Z]\([a-zA-Z]\))"
# A name, or a tuple of names: "(p, q) = (3, 2)".
_NAMES = rf"(?:{_VARIABLE}|\({_VARIABLE}(?:\s*,\s*{_VARIABLE})+\))"
_ASSIGNMENT = re.compile(rf"\s*({_NAMES})\s*=\s*([^=]+)")
_IN_SET = re.compile(rf"\s*{_VARIABLE}\s*\\in\s*(.+)", re.DOTALL)
_LESS = r"<|\\lt\b|\\leqslant\b|\\leq\b|\\le\b|≤|\\nless\b"
_MORE = r">|\\gt\b|\\geqslant\b|\\geq\b|\\ge\b|≥"
_RELATION = re.compile(rf"({_LESS}|{_MORE})")
_STRICT = {"<", ">", "\\lt", "\\gt"}
_MATRIX = re.compile(r"\\begin\{pmatrix\}(.*)\\end\{pmatrix\}", re.DOTALL)


@dataclass(frozen=True)
class Shape:
    """kind: "single", "list", "set", "tuple" or "interval"; brackets: "(]" etc."""

    kind: str
    items: tuple[str, ...]
    brackets: str = ""


def _closes_at_end(text: str) -> bool:
    """True when the bracket opening `text` is the one that closes at its very end.

    Every kind of bracket counts alike, so "[1, 2)" is one interval, while "(1, 2) \\cup
    (3, 4)" is not one bracketed answer.
    """
    depth, i = 0, 0
    while i < len(text):
        pair = text[i : i + 2]
        if pair in ("\\{", "\\}"):
            depth += 1 if pair == "\\{" else -1
            i += 2
        else:
            depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(text[i], 0)
            i += 1
        if depth <= 0 and i < len(text):
            return False
    return depth == 0


def shape(text: str) -> Shape:
    """How `text` is to be matched; see the module docstring."""
    text = text.strip()
    items = top_level_items(text)
    if len(items) > 1:
        return Shape("list", tuple(items))
    if text.startswith("\\{") and text.endswith("\\}") and _closes_at_end(text):
        return Shape("set", tuple(top_level_items(text[2:-2])))
    if len(text) > 2 and text[0] in "([" and text[-1] in ")]" and _closes_at_end(text):
        inner = top_level_items(text[1:-1])
        brackets = text[0] + text[-1]
        if len(inner) < 2:
            return Shape("single", (text,))
        interval = len(inner) == 2 and brackets != "()"
        return Shape("interval" if interval else "tuple", tuple(inner), brackets)
    return Shape("single", (text,))


def as_interval(text: str) -> str | None:
    """"x > 3" -> "(3, \\infty)", "1 \\le x < 2" -> "[1, 2)", "x \\in [0, 1]" -> "[0, 1]"."""
    if match := _IN_SET.fullmatch(text):
        return match[1].strip()
    parts = [part.strip() for part in _RELATION.split(text)]
    if len(parts) == 3 and re.fullmatch(_VARIABLE, parts[0]):
        return _one_sided(parts[1], parts[2])
    if len(parts) == 3 and re.fullmatch(_VARIABLE, parts[2]) and not re.search("[a-z]", parts[0]):
        return _one_sided(_mirrored(parts[1]), parts[0])  # "3 < x" is "x > 3"
    if len(parts) == 5 and re.fullmatch(_VARIABLE, parts[2]):
        low_op, high_op = parts[1], parts[3]
        if _is_less(low_op) and _is_less(high_op):
            low = "(" if low_op in _STRICT else "["
            high = ")" if high_op in _STRICT else "]"
            return f"{low}{parts[0]}, {parts[4]}{high}"
    return None


def _mirrored(op: str) -> str:
    """The relation read right to left: "<" -> ">", "\\le" -> "\\ge"."""
    if op in ("<", ">"):
        return {"<": ">", ">": "<"}[op]
    return op.replace("le", "ge") if "le" in op else op.replace("ge", "le")


def _is_less(op: str) -> bool:
    return re.fullmatch(_LESS, op) is not None


def _one_sided(op: str, bound: str) -> str | None:
    """The interval of "x op bound"; None when the bound is itself a variable ("x < y")."""
    if not bound or (re.search(_VARIABLE + r"\s*$", bound) and not re.search(r"\d|\\pi|\\infty", bound)):
        return None
    strict = op in _STRICT
    if _is_less(op):
        return f"(-\\infty, {bound}{')' if strict else ']'}"
    return f"{'(' if strict else '['}{bound}, \\infty)"


def assignment(text: str) -> tuple[str, str] | None:
    """"x = 4" -> ("x", "4"); "f(x) = 2x" -> ("f(x)", "2x"); anything else None."""
    match = _ASSIGNMENT.fullmatch(text)
    return (match[1], match[2].strip()) if match else None


def matrix_rows(text: str) -> tuple[tuple[str, ...], ...] | None:
    """"\\begin{pmatrix} 1 & 0 \\\\ 0 & 1 \\end{pmatrix}" -> (("1", "0"), ("0", "1")), one
    matrix with rows of equal length; None for anything else (a nested matrix included)."""
    match = _MATRIX.fullmatch(text.strip())
    if match is None or "\\begin" in match[1]:
        return None
    lines = [line.strip() for line in match[1].split("\\\\")]
    lines = lines[:-1] if len(lines) > 1 and not lines[-1] else lines
    rows = tuple(tuple(cell.strip() for cell in line.split("&")) for line in lines)
    if len({len(row) for row in rows}) != 1 or any(not cell for row in rows for cell in row):
        return None
    return rows


def vector_items(text: str) -> tuple[str, ...] | None:
    """The entries of a one-column or one-row `pmatrix` (a vector written as a matrix), else
    None; `clean` has already made "\\langle 2, -1 \\rangle" the tuple (2, -1)."""
    rows = matrix_rows(text)
    if rows is None or (len(rows) > 1 and len(rows[0]) > 1) or len(rows) * len(rows[0]) < 2:
        return None
    return tuple(cell for row in rows for cell in row)


def tuple_items(text: str) -> tuple[str, ...] | None:
    """The entries of a parenthesised tuple "(2, -1, 3)", else None."""
    found = shape(text)
    return found.items if found.kind == "tuple" and found.brackets == "()" else None
