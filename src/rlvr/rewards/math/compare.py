"""Is one answer string equal to another? The comparison half of the maths verifier.

`Comparison(timeout_s).equal(answer, gold)` gives True, False, or None (neither side could be
read), and raises `VerifierTimeout` when math-verify ran past the limit. In order:

1. both sides `clean`ed (delimiters, spacing, degrees, currency dropped, never converted);
   the same text is equal; a number with a base subscript ("204_5") only equals itself;
2. a one-variable inequality is the interval it describes ("x > 3" is "(3, \\infty)");
3. lists and brackets (`structure.shape`): a bare list and a set are unordered, a tuple
   ordered, an interval's brackets part of its value, and a set never equals a tuple;
4. "x = 4" against "4" compares the 4; "x = 4" against "y = 4" is False;
5. one value: exact numbers (`Fraction`, percent-aware), a decimal against an exact value
   (right only when correctly rounded to 10+ significant digits), square roots, complex
   numbers "a + bi", polynomials, intervals and unions of them, integer powers and power
   towers by their prime factorisations (`math/power.py`), constant expressions by
   value, then math-verify under the time limit, and when math-verify raises, the value of
   both sides again (None if there is none).

The sympy-free number, yes/no and interval rules live in `math/exact.py`.
"""

from __future__ import annotations

import logging
import math
import re
import time
from fractions import Fraction
from functools import lru_cache, partial

from rlvr.rewards.math.exact import (
    _DECIMAL,
    _intervals_equal,
    decimal_matches,
    numbers_equal,
    rounded_gold_matches,
    text_key,
    truth_equal,
)
from rlvr.rewards.math.normalize import clean, plus_minus, signed_square, top_level_items
from rlvr.rewards.math.numeric import numeric_value, variables
from rlvr.rewards.math.numeric import tokens as numeric_tokens
from rlvr.rewards.math.polynomial import gaussian, polynomial
from rlvr.rewards.math.power import towers_equal
from rlvr.rewards.math.sets import condition_set
from rlvr.rewards.math.structure import (
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
# A power tower, an exponent of 6+ digits, a factorial of a 4+ digit number, a big sum.
_TOO_LARGE = re.compile(
    r"\^\s*\{[^{}]*\^|\^\s*\d+\s*\^|\^\s*\{?\s*-?\d{6,}|\d{4,}\s*!|\\(?:prod|sum)_"
    r"|\^[^!()]{0,40}\)\s*!"  # the factorial of a power: "(10^{100})!"
    r"|\d[eE][+-]?\d{4,}"  # a float literal's exponent: sympy builds 5e176681471 exactly
)
_BASE = re.compile(r"\d\s*_\s*\{?\s*\d+\s*\}?")
_LONG_INTEGER = re.compile(r"(?<![\d.])\d{16,}(?![\d.])")


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


_FLOAT_EXACT = 2.0**53  # above it consecutive integers share a float


def _by_value(answer: str, gold: str, rounded_gold: bool = False) -> bool | None:
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
    if max(abs(answer_value), abs(gold_value)) >= _FLOAT_EXACT:
        return None  # short text, huge value: 2^{64} against 2^{64}+1 differ below a float's ulp
    if _DECIMAL.fullmatch(gold.strip()) and not _DECIMAL.fullmatch(answer.strip()):
        if rounded_gold_matches(Fraction(answer_value), gold, None, rounded_gold):
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

    def __init__(self, timeout_s: float, rounded_golds: bool = False):
        self.timeout_s = timeout_s
        self.rounded_golds = rounded_golds  # decimal golds are rounded values (math/exact.py)
        self.deadline = time.monotonic() + timeout_s
        self.too_large = False  # set when an answer was refused unread

    def equal(self, answer: str, gold: str) -> bool | None:
        """Steps 1-4 of the module docstring; one value goes to `single`."""
        answer, gold = _approximately(clean(answer)), _approximately(clean(gold))
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
        answer, gold = condition_set(answer), condition_set(gold)  # "|x| \\ge 1", "\\{x \\mid x > 2\\}"
        answer, gold = _union(answer), _union(gold)
        answer, gold = _as_intervals(answer, gold)
        if "\\cup" in answer + gold and (union := _intervals_equal(answer, gold)) is not None:
            return union  # "[1, 2] \\cup (2, 3)" is the interval "[1, 3)", not a list of two
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
        rounded = self.rounded_golds
        for check in (partial(numbers_equal, rounded_gold=rounded), towers_equal, _exact_single, _intervals_equal,
                      partial(_by_value, rounded_gold=rounded)):
            equal = check(answer, gold)
            if equal is not None:
                return equal
        if too_large(answer) and not too_large(gold):
            self.too_large = True
            return False
        loading = time.monotonic()
        _math_verify()  # the one-off import and warm-up: not inside the time limit
        self.deadline += time.monotonic() - loading  # ~0 once loaded (lru_cache)
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise VerifierTimeout(self.timeout_s)
        try:
            return run_with_time_limit(math_verify_equal, remaining, answer, gold)
        except VerifierTimeout:
            raise VerifierTimeout(self.timeout_s) from None
        except Exception:  # deliberate: math-verify raising is not a verdict
            return None  # every sympy-free reading was tried above: unparsable


_NAMED_APPROX = re.compile(r"^([a-zA-Z](?:_\{?\w+\}?)?)\s*\\approx\s*(?!.*\\approx)(.+)$")


def _approximately(text: str) -> str:
    """"E \\approx 3.98" is the named value "E = 3.98": the decimal rules still judge the
    digits (rule 1), so an approximation of an exact gold stays wrong."""
    if "\\approx" not in text or "=" in text:
        return text
    return _NAMED_APPROX.sub(r"\1 = \2", text, count=1)


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
