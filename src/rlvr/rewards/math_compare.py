"""Is one answer string equal to another? The comparison half of the maths verifier.

`Comparison(timeout_s).equal(answer, gold)` gives True, False, or None (neither side could be
read), and raises `VerifierTimeout` when math-verify ran past the limit. In order:

1. both sides `clean`ed (delimiters, spacing, degrees, currency dropped, never converted);
   the same text is equal; a number with a base subscript ("204_5") only equals itself;
2. a one-variable inequality is the interval it describes ("x > 3" is "(3, \\infty)");
3. lists and brackets (`math_structure.shape`): a bare list and a set are unordered, a tuple
   ordered, an interval's brackets part of its value, and a set never equals a tuple;
4. "x = 4" against "4" compares the 4; "x = 4" against "y = 4" is False;
5. one value: exact numbers (`Fraction`, percent-aware), a decimal against an exact value
   (right only when correctly rounded to 10+ significant digits), square roots,
   polynomials, constant expressions by value, then math-verify under the time limit, and
   when math-verify raises, the value of both sides again (None if there is none).

Two gold forms of TheoremQA (and graders like it) are read as they mean: a True/False gold
equals the yes/no answer ("\\text{Yes}" = "True"), and a decimal gold of 3+ significant
digits is a rounded value (`rounded_gold_matches`): a more precise answer that rounds to it
is right ("2.2361" or "\\sqrt5" against "2.236"), a less precise one is not ("0.693" against
"0.6931"). An exact gold keeps rule 1: "0.333" is not "\\frac13".
"""

from __future__ import annotations

import logging
import math
import re
import time
from fractions import Fraction
from functools import lru_cache

from rlvr.rewards.math_normalize import (
    clean,
    interval_parts,
    plus_minus,
    top_level_items,
    signed_square,
    split_percent,
    to_fraction,
)
from rlvr.rewards.math_numeric import numeric_value, variables
from rlvr.rewards.math_numeric import tokens as numeric_tokens
from rlvr.rewards.math_polynomial import gaussian, polynomial
from rlvr.rewards.math_structure import (
    Shape,
    as_interval,
    assignment,
    matrix_rows,
    shape,
    tuple_items,
    vector_items,
)
from rlvr.rewards.time_limit import VerifierTimeout, run_with_time_limit

MAX_ANSWER_CHARS = 500
MIN_DECIMAL_DIGITS = 10
# A decimal gold with this many significant digits is read as rounded ("2.236", "6.28"); a
# shorter one ("0.5", "2.5", "1.0") is most often an exact value and is compared exactly.
MIN_ROUNDED_GOLD_DIGITS = 3
# TheoremQA's bool answers against the words a model answers a yes/no question with.
_TRUTH = {"yes": True, "true": True, "no": False, "false": False}
# A power tower, an exponent of 6+ digits, a factorial of a 4+ digit number, a big sum.
_TOO_LARGE = re.compile(
    r"\^\s*\{[^{}]*\^|\^\s*\d+\s*\^|\^\s*\{?\s*-?\d{6,}|\d{4,}\s*!|\\(?:prod|sum)_"
    r"|\^[^!()]{0,40}\)\s*!"  # the factorial of a power: "(10^{100})!"
    r"|\d[eE][+-]?\d{4,}"  # a float literal's exponent: sympy builds 5e176681471 exactly
)
_BASE = re.compile(r"\d\s*_\s*\{?\s*\d+\s*\}?")
_DECIMAL = re.compile(r"-?\d*\.\d+")
_LONG_INTEGER = re.compile(r"(?<![\d.])\d{16,}(?![\d.])")
_TEXT = re.compile(r"\\(?:text|textbf|mathrm|mbox|operatorname)\s*\{([^{}]*)\}")


class _OwnTimeoutFilter(logging.Filter):
    """Drop math-verify's warning that its timeouts are off: we put our own limit around it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Timeout is disabled")


for _name in ("math_verify.parser", "math_verify.grader"):
    logging.getLogger(_name).addFilter(_OwnTimeoutFilter())


def too_large(text: str) -> bool:
    """True for answers sympy could take minutes to evaluate: towers, huge powers, factorials.

    "9^{9^{9}}", "10^{100000}", "5000!"; "2^{10}", "10!" are not. So is any answer over
    `MAX_ANSWER_CHARS`: sympy spends seconds inside single C calls on a 20,000-digit
    literal, where no alarm reaches.
    """
    return len(text) > MAX_ANSWER_CHARS or _TOO_LARGE.search(text) is not None


def text_key(text: str) -> str:
    """The form two answers are the same text in: no spaces or `\\text{}`; words in lower case."""
    key = re.sub(r"\s+", "", _TEXT.sub(r"\1", text))
    while len(key) > 2 and key[0] == "{" and key[-1] == "}" and key.count("{") == 1:
        key = key[1:-1]
    if not re.search(r"[\d\\^_=+*/]", key):
        key = key.lower().strip(".,;:!'\"")
    return key


@lru_cache(maxsize=1)
def _math_verify():
    """math-verify, imported and warmed up on first use: it pulls in sympy and builds its
    parsers (seconds), which answers decided without it never need, so `import rlvr.rewards`
    stays fast and the first real check does not spend its time limit on set-up."""
    import math_verify

    gold = math_verify.parse("$x+1$", parsing_timeout=None)
    math_verify.verify(gold, math_verify.parse("$1+x$", parsing_timeout=None), timeout_seconds=None)
    return math_verify


def _parse(text: str) -> list:
    """math-verify parse with its own (signal) timeout off and its errors raised, not hidden."""
    return _math_verify().parse(f"${text}$", parsing_timeout=None, raise_on_error=True)


@lru_cache(maxsize=65536)
def parse_gold(gold: str) -> tuple:
    """Parse a gold answer once; the same gold is checked against every sample of its group."""
    return tuple(_parse(gold))


def math_verify_equal(answer: str, gold: str) -> bool | None:
    """True/False from math-verify; None when either side parses to nothing."""
    gold_parsed = parse_gold(gold)
    answer_parsed = _parse(answer)
    if not gold_parsed or not answer_parsed:
        return None
    return _math_verify().verify(
        list(gold_parsed), answer_parsed, timeout_seconds=None, raise_on_error=True
    )


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


def rounded_gold_matches(answer_value: Fraction | float, gold: str, answer: str | None) -> bool:
    """A decimal gold of `MIN_ROUNDED_GOLD_DIGITS`+ significant digits read as rounded to its
    last digit: `answer_value` within half a unit of that digit, and the answer more precise
    than the gold (more decimal places, or `answer` None: an exact value such as 2\\pi)."""
    gold = gold.strip()
    if not _DECIMAL.fullmatch(gold) or _significant_digits(gold) < MIN_ROUNDED_GOLD_DIGITS:
        return False
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


def numbers_equal(answer: str, gold: str) -> bool | None:
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
    return rounded_gold_matches(answer_value, gold_body, written)


def _exact_single(answer: str, gold: str) -> bool | None:
    """Square roots and one-letter polynomials, exactly and without sympy; None if neither."""
    if _DECIMAL.fullmatch(answer) or _DECIMAL.fullmatch(gold):
        return None  # a decimal is judged by its digits (`_by_value`), not by its square
    answer_square, gold_square = signed_square(answer), signed_square(gold)
    if answer_square is not None and gold_square is not None:
        return answer_square == gold_square
    if "i" in answer or "i" in gold:  # "3 - 4i": a complex number, both parts exact
        answer_complex, gold_complex = gaussian(answer), gaussian(gold)
        if answer_complex is not None and gold_complex is not None:
            return answer_complex == gold_complex
    answer_poly, gold_poly = polynomial(answer), polynomial(gold)
    if answer_poly is None or gold_poly is None:
        return None
    (answer_letter, answer_coefficients), (gold_letter, gold_coefficients) = answer_poly, gold_poly
    constant = len(answer_coefficients) == 1 and len(gold_coefficients) == 1
    if answer_letter != gold_letter and not constant and None not in (answer_letter, gold_letter):
        return None  # "t^2" against "x^2": a renamed variable is math-verify's call
    return answer_coefficients == gold_coefficients


def _by_value(answer: str, gold: str) -> bool | None:
    """Constant expressions by their float value; a plain decimal by `decimal_matches`."""
    answer_tokens, gold_tokens = numeric_tokens(answer), numeric_tokens(gold)
    if answer_tokens is None or gold_tokens is None:
        return None
    names = variables(answer_tokens)
    if names or variables(gold_tokens):
        return _same_function(answer, gold, names) if names == variables(gold_tokens) else None
    if _LONG_INTEGER.search(answer) or _LONG_INTEGER.search(gold):
        return None  # beyond a float's 15 digits: 2^{100} against 2^{100}+1 needs sympy
    answer_value, gold_value = numeric_value(answer), numeric_value(gold)
    if answer_value is None or gold_value is None:
        return None
    if _DECIMAL.fullmatch(gold.strip()) and not _DECIMAL.fullmatch(answer.strip()):
        if rounded_gold_matches(Fraction(answer_value), gold, None):
            return True  # "2\\pi" against the rounded "6.28"
    for text, value in ((answer, gold_value), (gold, answer_value)):
        if _DECIMAL.fullmatch(text.strip()):
            return decimal_matches(text.strip(), value)
    return math.isclose(answer_value, gold_value, rel_tol=1e-12, abs_tol=1e-12)


# Where two expressions in the same variables are compared: both signs, no round numbers, so
# that sqrt(x^2) is not x and a wrong coefficient cannot cancel out.
_POINTS = (0.5377, -1.8339, 2.2588, -0.8622, 1.3188)


def _same_function(answer: str, gold: str, names: set[str]) -> bool | None:
    """Equal values at three points where both are defined: True; any clear difference: False.

    None when fewer than three points are defined for both (logs of negatives, a pole), or
    when there are more than three variables: math-verify decides.
    """
    if len(names) > 3:
        return None
    agree = 0
    for k in range(len(_POINTS)):
        env = {name: _POINTS[(k + j) % len(_POINTS)] * (j + 1) for j, name in enumerate(sorted(names))}
        answer_value, gold_value = numeric_value(answer, env), numeric_value(gold, env)
        if answer_value is None or gold_value is None:
            continue
        if not math.isclose(answer_value, gold_value, rel_tol=1e-9, abs_tol=1e-12):
            return False
        agree += 1
        if agree == 3:
            return True
    return None


class Comparison:
    """One verifier check: every math-verify call in it shares one wall-clock budget."""

    def __init__(self, timeout_s: float):
        self.timeout_s = timeout_s
        self.deadline = time.monotonic() + timeout_s
        self.too_large = False  # set when an answer was refused unread

    def equal(self, answer: str, gold: str) -> bool | None:
        """Steps 1-4 of the module docstring; one value goes to `single`."""
        answer, gold = clean(answer), clean(gold)
        if text_key(answer) == text_key(gold):
            return True
        if (truth := truth_equal(answer, gold)) is not None:
            return truth
        if _BASE.search(answer) or _BASE.search(gold):
            return False  # "204_5" is not 204, and its value is not worked out
        answer_named, gold_named = assignment(answer), assignment(gold)
        if answer_named and gold_named:
            if text_key(answer_named[0]) == text_key(gold_named[0]):
                return self.equal(answer_named[1], gold_named[1])
            if not re.search("[a-zA-Z]", answer_named[1] + gold_named[1]):
                return False  # "x = 4" is not "y = 4"
        answer, gold = _drop_name(answer, gold), _drop_name(gold, answer)
        answer, gold = plus_minus(answer), plus_minus(gold)  # "x = 1 \\pm 2" only now
        answer, gold = _union(answer), _union(gold)
        answer, gold = _as_intervals(answer, gold)
        answer, gold = _vectors_as_tuples(answer, gold)
        answer_rows, gold_rows = matrix_rows(answer), matrix_rows(gold)
        if answer_rows and gold_rows:
            return self._matrices(answer_rows, gold_rows)
        answer_shape, gold_shape = shape(answer), shape(gold)
        answer_names, gold_names = _assignments(answer_shape), _assignments(gold_shape)
        if answer_names and gold_names:
            return self._named(answer_names, gold_names)
        answer_shape, gold_shape = _tupled(answer_shape), _tupled(gold_shape)
        if answer_shape.kind != "single" or gold_shape.kind != "single":
            return self._structures(answer_shape, gold_shape)
        return self.single(answer.strip(), gold.strip())

    def _named(self, answer: dict[str, str], gold: dict[str, str]) -> bool:
        """"a_3 = 2, a_{37} = 19" in any order: the same names with equal values."""
        if set(answer) != set(gold):
            return False
        return all(self.equal(answer[name], gold[name]) is True for name in gold)

    def _matrices(self, answer: tuple, gold: tuple) -> bool:
        """Two matrices: the same rows and columns (a row is not a column), entry by entry."""
        if len(answer) != len(gold) or len(answer[0]) != len(gold[0]):
            return False
        pairs = [(a, g) for answer_row, gold_row in zip(answer, gold) for a, g in zip(answer_row, gold_row)]
        return all(self.equal(a, g) is True for a, g in pairs)

    def _structures(self, answer: Shape, gold: Shape) -> bool | None:
        """Lists, tuples, sets and intervals item by item (step 3 of the module docstring)."""
        kinds = {answer.kind, gold.kind}
        if "single" in kinds:
            return False
        ordered = bool(kinds & {"tuple", "interval"})
        if ordered and len(answer.items) != len(gold.items):
            return False
        if "set" in kinds and kinds & {"tuple", "interval"}:
            return False  # (1, 5) is not {1, 5}
        if kinds <= {"tuple", "interval"}:
            if answer.brackets != gold.brackets:
                return False
        if ordered:
            return all(self.equal(a, g) is True for a, g in zip(answer.items, gold.items))
        # unordered: as sets, so a repeated item counts once
        return all(any(self.equal(a, g) is True for a in answer.items) for g in gold.items) and all(
            any(self.equal(a, g) is True for g in gold.items) for a in answer.items
        )

    def single(self, answer: str, gold: str) -> bool | None:
        """One value against one value (step 5 of the module docstring)."""
        for check in (numbers_equal, _exact_single, _intervals_equal, _by_value):
            equal = check(answer, gold)
            if equal is not None:
                return equal
        if too_large(answer) and not too_large(gold):
            self.too_large = True
            return False
        _math_verify()  # the first import takes seconds: not inside the time limit
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise VerifierTimeout(self.timeout_s)
        try:
            return run_with_time_limit(math_verify_equal, remaining, answer, gold)
        except VerifierTimeout:
            raise VerifierTimeout(self.timeout_s) from None
        except Exception:  # deliberate: math-verify raising is not a verdict
            return None  # every sympy-free reading was tried above: unparsable


def _drop_name(text: str, other: str) -> str:
    """"x = 4" -> "4", "2 + 3 = 5" -> "5", "7 = 11a+c" -> "7" when `other` has no "=";
    else `text` as it is."""
    if "=" not in text or "=" in other:
        return text
    named = assignment(text)
    if named:
        return named[1]
    left, right = text.split("=", 1)[0], text.rsplit("=", 1)[1].strip()
    if "\\{" not in text and len(top_level_items(text)) == 1 and not re.search("[a-zA-Z]", left):
        if re.search("[a-zA-Z]", right):
            return left.strip()  # "7 = 11a+c" states the value 7, not the expression
        return right  # a worked chain states its last value
    return text


def _vectors_as_tuples(answer: str, gold: str) -> tuple[str, str]:
    """A vector written as a one-row or one-column `pmatrix` against a tuple "(2, 3)" (or
    "\\langle 2, 3 \\rangle", which `clean` made one): both as tuples."""
    answer_vector, gold_vector = vector_items(answer), vector_items(gold)
    if answer_vector is None and gold_vector is None:
        return answer, gold
    if matrix_rows(answer) and matrix_rows(gold):
        return answer, gold  # two matrices: a row vector is not a column vector
    answer_items = answer_vector or tuple_items(answer)
    gold_items = gold_vector or tuple_items(gold)
    if answer_items is None or gold_items is None:
        return answer, gold
    return f"({', '.join(answer_items)})", f"({', '.join(gold_items)})"


def _union(text: str) -> str:
    """"x < -2 or x > 3" -> "(-\\infty, -2) \\cup (3, \\infty)": inequalities joined by "or"."""
    items = top_level_items(text)
    if len(items) < 2 or " or " not in text.replace("\\text{ or }", " or ").replace("\\text{or}", " or "):
        return text
    intervals = [as_interval(item) for item in items]
    return text if None in intervals else " \\cup ".join(intervals)


def _as_intervals(answer: str, gold: str) -> tuple[str, str]:
    """Inequalities as intervals, when that leaves two intervals to compare; else unchanged."""
    answer_interval, gold_interval = as_interval(answer), as_interval(gold)
    if answer_interval is None and gold_interval is None:
        return answer, gold
    new_answer, new_gold = answer_interval or answer, gold_interval or gold
    bracketed = {"interval", "tuple"}
    if shape(new_answer).kind in bracketed and shape(new_gold).kind in bracketed:
        return new_answer, new_gold
    return answer, gold


def _assignments(found: Shape) -> dict[str, str] | None:
    """{"p": "5", "q": "2"} for the list "p=5, q=2" of assignments to distinct names, else None."""
    if found.kind != "list":
        return None
    named = [assignment(item) for item in found.items]
    if None in named or len({name for name, _ in named}) != len(named):
        return None
    return {re.sub(r"[{}\s]", "", name): value for name, value in named}


def _tupled(found: Shape) -> Shape:
    """"p=5, q=2" is the tuple (5, 2), in the order written (against a tuple or a list)."""
    named = _assignments(found)
    if named is None:
        return found
    return Shape("tuple", tuple(named.values()), "()")


def _intervals_equal(answer: str, gold: str) -> bool | None:
    """Intervals of plain numbers: equal when brackets and endpoints are (no sympy); unions
    of them ("(-\\infty, 2) \\cup [3, 5]") as the sets they are, after merging."""
    if "\\cup" in answer or "\\cup" in gold:
        answer_union, gold_union = _union_set(answer), _union_set(gold)
        if answer_union is None or gold_union is None:
            return None
        return answer_union == gold_union
    answer_interval, gold_interval = interval_parts(answer), interval_parts(gold)
    if answer_interval is None or gold_interval is None:
        return None
    return answer_interval == gold_interval


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
            if high > last_high or high == last_high and high_closed:
                merged[-1] = (last_low, last_low_closed, high, high_closed or high == last_high and last_high_closed)
            continue
        merged.append((low, low_closed, high, high_closed))
    return merged
