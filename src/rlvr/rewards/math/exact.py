"""Exact comparisons of plain values, without sympy: the number rules of the maths verifier.

- numbers (`numbers_equal`): `Fraction`s, a percent sign on either side as a unit, a decimal
  against an exact value right only when correctly rounded to 10+ significant digits;
- TheoremQA's gold forms (and those of graders like it), read as they mean: a True/False gold
  equals the yes/no answer (`truth_equal`: "\\text{Yes}" = "True"), and a decimal gold of 3+
  significant digits *known to be rounded* is a rounded value (`rounded_gold_matches`): a more
  precise answer that rounds to it is right ("2.2361" or "\\sqrt5" against "2.236"), a less
  precise one is not ("0.693" against "0.6931"). A gold is known to be rounded when the task says
  so (`MathVerifier(rounded_golds=True)`, `reward.math_rounded_golds`: TheoremQA's float answers),
  when it is written as one ("\\approx 2.236", "≈ 2.236"), or when it has 10+ significant digits
  (a float printout). Any other gold is exact: "0.1254" is not "0.125", "12.54" not "12.5", and
  "0.333" is not "\\frac13";
- intervals of plain numbers, and unions of them as the sets they are (`_intervals_equal`).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from rlvr.rewards.math.normalize import interval_parts, split_percent, to_fraction

MIN_DECIMAL_DIGITS = 10
# A decimal gold with this many significant digits is read as rounded ("2.236", "6.28"); a
# shorter one ("0.5", "2.5", "1.0") is most often an exact value and is compared exactly.
MIN_ROUNDED_GOLD_DIGITS = 3
# TheoremQA's bool answers against the words a model answers a yes/no question with.
_TRUTH = {"yes": True, "true": True, "no": False, "false": False}
_DECIMAL = re.compile(r"-?\d*\.\d+")
_TEXT = re.compile(r"\\(?:text|textbf|mathrm|mbox|operatorname)\s*\{([^{}]*)\}")


def text_key(text: str) -> str:
    """The form two answers are the same text in: no spaces or `\\text{}`; words in lower case."""
    key = re.sub(r"\s+", "", _TEXT.sub(r"\1", text))
    while len(key) > 2 and key[0] == "{" and key[-1] == "}" and key.count("{") == 1:
        key = key[1:-1]
    if not re.search(r"[\d\\^_=+*/]", key):
        key = key.lower().strip(".,;:!'\"")
    return key


def _significant_digits(decimal: str) -> int:
    return len(decimal.lstrip("-").replace(".", "").lstrip("0"))


def decimal_matches(decimal: str, value: Fraction | float) -> bool:
    """A decimal against an exact value: equal, or correctly rounded to 10+ significant digits."""
    exact = Fraction(decimal)
    if exact == value:
        return True
    if _significant_digits(decimal) < MIN_DECIMAL_DIGITS:
        return False
    half_step = Fraction(1, 2 * 10 ** len(decimal.split(".")[1]))
    slack = abs(Fraction(value)) * Fraction(1, 10**14) if isinstance(value, float) else 0
    return abs(exact - Fraction(value)) <= half_step + slack


def _decimal_places(decimal: str) -> int:
    return len(decimal.split(".")[1]) if "." in decimal else 0


def rounded_gold_matches(answer_value: Fraction | float, gold: str, answer: str | None,
                         rounded: bool = False) -> bool:
    """A decimal gold of `MIN_ROUNDED_GOLD_DIGITS`+ significant digits, known to be rounded
    (`rounded`, or 10+ digits), read as rounded to its last digit: `answer_value` within half a
    unit of that digit, and the answer more precise than the gold (more decimal places, or
    `answer` None: an exact value such as 2\\pi)."""
    gold = gold.strip()
    if not _DECIMAL.fullmatch(gold) or _significant_digits(gold) < MIN_ROUNDED_GOLD_DIGITS:
        return False
    if not rounded and _significant_digits(gold) < MIN_DECIMAL_DIGITS:
        return False  # "0.125" may well be exact: "0.1254" is another number
    if answer is not None and _decimal_places(answer.strip()) <= _decimal_places(gold):
        return False  # as precise as the gold (compared exactly) or less: "0.693" != "0.6931"
    half_step = Fraction(1, 2 * 10 ** _decimal_places(gold))
    return abs(Fraction(answer_value) - Fraction(gold)) <= half_step


def truth_equal(answer: str, gold: str) -> bool | None:
    """"Yes"/"No" against a TheoremQA "True"/"False" gold (either way round, any case, in
    `\\text{}`); None unless both sides are one of those words."""
    answer_truth, gold_truth = _TRUTH.get(text_key(answer)), _TRUTH.get(text_key(gold))
    if answer_truth is None or gold_truth is None:
        return None
    return answer_truth == gold_truth


def numbers_equal(answer: str, gold: str, rounded_gold: bool = False) -> bool | None:
    """Exact comparison when both are plain numbers; None when either is not (undecided).

    A percent sign on either side is a unit: "28%" equals "28" and, by value, "0.28"; without
    one, "0.28" is not "28". A decimal equals a fraction only as `decimal_matches` says.
    """
    answer_body, answer_percent = split_percent(answer)
    gold_body, gold_percent = split_percent(gold)
    answer_value, gold_value = to_fraction(answer_body), to_fraction(gold_body)
    if answer_value is None or gold_value is None:
        return None
    if answer_value == gold_value:
        return True
    if answer_percent != gold_percent:
        scaled = answer_value / 100 if answer_percent else answer_value * 100
        return scaled == gold_value
    for decimal, value in ((answer_body, gold_value), (gold_body, answer_value)):
        if _DECIMAL.fullmatch(decimal.strip()) and decimal_matches(decimal.strip(), value):
            return True
    # a decimal answer by its decimal places; any other (an integer, a fraction) is exact
    written = answer_body.strip() if _DECIMAL.fullmatch(answer_body.strip()) else None
    return rounded_gold_matches(answer_value, gold_body, written, rounded_gold)


def _intervals_equal(answer: str, gold: str) -> bool | None:
    """Intervals of plain numbers: equal when brackets and endpoints are (no sympy); unions
    of them ("(-\\infty, 2) \\cup [3, 5]") as the sets they are, after merging; against a
    union, "x \\ne 2" is the real line without 2."""
    if "\\cup" in answer or "\\cup" in gold:
        answer_union = _union_set(_excluded_point(answer))
        gold_union = _union_set(_excluded_point(gold))
        if answer_union is None or gold_union is None:
            return None
        return answer_union == gold_union
    answer_interval, gold_interval = interval_parts(answer), interval_parts(gold)
    if answer_interval is None or gold_interval is None:
        return None
    return answer_interval == gold_interval


_EXCLUDED = re.compile(r"([a-zA-Z])\s*\\neq?\s*(?P<point>[^=<>]+)")


def _excluded_point(text: str) -> str:
    """"x \\ne 2" -> "(-\\infty, 2) \\cup (2, \\infty)": every real number but that one (a
    domain answer); anything else unchanged."""
    match = _EXCLUDED.fullmatch(text.strip())
    if match is None or to_fraction(match["point"]) is None:
        return text
    point = match["point"].strip()
    return f"(-\\infty, {point}) \\cup ({point}, \\infty)"


def _union_set(text: str) -> list[tuple] | None:
    """The union of intervals `text` writes, merged and sorted, as (low, low closed, high,
    high closed) tuples; None unless every piece is a non-empty interval of plain numbers.

    Merging makes the reading exact: "[1, 2] \\cup (2, 3)" is "[1, 3)", so two unions are
    equal sets exactly when their merged forms are. Infinite ends must be open."""
    pieces = []
    for piece in text.split("\\cup"):
        parts = interval_parts(piece.strip())
        if parts is None:
            return None
        opening, low, high, closing = parts
        low = -math.inf if low == "-inf" else low
        high = math.inf if high == "+inf" else high
        if isinstance(low, str) or isinstance(high, str):
            return None  # "+inf" as a low end, "-inf" as a high one: not an interval
        if math.isinf(low) and opening == "[" or math.isinf(high) and closing == "]":
            return None
        if low > high or low == high and (opening, closing) != ("[", "]"):
            return None  # empty, or a point: math-verify's call
        pieces.append((low, opening == "[", high, closing == "]"))
    pieces.sort(key=lambda piece: (piece[0], not piece[1]))
    merged = [pieces[0]]
    for low, low_closed, high, high_closed in pieces[1:]:
        last_low, last_low_closed, last_high, last_high_closed = merged[-1]
        if low < last_high or low == last_high and (last_high_closed or low_closed):
            if high > last_high or high == last_high and high_closed:  # reaches further
                merged[-1] = (last_low, last_low_closed, high, high_closed)
            continue
        merged.append((low, low_closed, high, high_closed))
    return merged
