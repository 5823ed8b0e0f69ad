"""Solution sets written as conditions: set-builder notation and absolute-value inequalities.

MATH's intermediate-algebra answers give a solution set in several spellings; each is the
interval (or union) it denotes, so the interval rules compare them exactly:

- `\\{x \\mid x > 2\\}`, `\\{x : x \\le 3\\}`, `\\{x \\in \\mathbb{R} \\mid ...\\}`: the condition
  inside (which `structure.as_interval` reads);
- `|x| \\ge 1`, `|x - 3| < 2`, `|x + 1| \\le 4` with number bounds: `(-\\infty,-1] \\cup
  [1,\\infty)`, `(1, 5)`, `[-5, 3]`. A bound of zero or less, or a variable one, is left alone.
"""

from __future__ import annotations

import re
from fractions import Fraction

from rlvr.rewards.math.normalize import to_fraction

_SET_BUILDER = re.compile(
    r"\\\{\s*([a-zA-Z])\s*(?:\\in\s*(?:\\mathbb\s*\{?R\}?|\(-\\infty,\s*\\infty\))\s*)?"
    r"(?:\\mid|\\vert|\||:)\s*(?P<condition>[^{}]+?)\s*\\\}"
)
_ABSOLUTE = re.compile(
    r"(?:\\left)?\s*(?:\||\\vert|\\lvert)\s*([a-zA-Z])\s*(?:(?P<sign>[+-])\s*(?P<shift>[^|<>=\\]+?))?\s*"
    r"(?:\\right)?\s*(?:\||\\vert|\\rvert)\s*(?P<op><|>|\\leq?|\\geq?)\s*(?P<bound>[^<>=|]+)"
)


def _number(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def _absolute(match: re.Match) -> str | None:
    bound = to_fraction(match["bound"].strip())
    shift = to_fraction(match["shift"].strip()) if match["shift"] else Fraction(0)
    if bound is None or shift is None or bound <= 0:  # |x - a| < 0 is empty, |x - a| >= 0 all reals
        return None
    centre = shift if match["sign"] == "-" else -shift  # |x - 3| is centred on 3
    low, high = _number(centre - bound), _number(centre + bound)
    op = match["op"]
    if op == "<":
        return f"({low}, {high})"
    if op.startswith("\\le"):
        return f"[{low}, {high}]"
    if op == ">":
        return f"(-\\infty, {low}) \\cup ({high}, \\infty)"
    return f"(-\\infty, {low}] \\cup [{high}, \\infty)"


def condition_set(text: str) -> str:
    """The interval or union a set-builder set or an absolute-value inequality denotes;
    any other text unchanged."""
    if "\\{" in text and (builder := _SET_BUILDER.fullmatch(text.strip())):
        text = builder["condition"].strip()
    if "|" in text or "vert" in text:
        if (absolute := _ABSOLUTE.fullmatch(text.strip())) and (interval := _absolute(absolute)):
            return interval
    return text
