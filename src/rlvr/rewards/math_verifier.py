"""Reward for maths answers: extract the final answer, then check it against the gold one.

Three stages, each small and separately testable:

1. Extraction (`math_extract.py`): pull one answer string out of the completion.
2. Normalisation (`math_normalize.py`), on both sides: mixed numbers, thousands separators,
   currency and units, percentages, repeating decimals, multiple-choice letters, hedges.
3. Equivalence: plain numbers are compared exactly with `fractions.Fraction`; a choice letter
   against a letter; anything else (LaTeX, expressions, sets, ...) goes to math-verify under
   our own wall-clock limit (see `time_limit.py` for why not math-verify's), except answers
   too large to evaluate, which are refused in microseconds.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from functools import lru_cache

import math_verify

from rlvr.rewards.math_extract import (
    EXTRACTORS,
    extract_answer,
    extract_boxed,
    extract_last_choice,
    extract_last_number,
)
from rlvr.rewards.math_normalize import (
    choice_letter,
    interval_parts,
    is_choice_gold,
    signed_square,
    split_percent,
    to_fraction,
    top_level_items,
)
from rlvr.rewards.math_polynomial import polynomial
from rlvr.rewards.time_limit import VerifierTimeout, run_with_time_limit
from rlvr.rewards.verdict import Verdict

__all__ = [
    "EXTRACTORS",
    "MathVerifier",
    "as_fraction",
    "extract_answer",
    "extract_boxed",
    "extract_last_choice",
    "extract_last_number",
    "exact_equal",
    "numbers_equal",
    "too_large",
]

MAX_ANSWER_CHARS = 500
_ONE_VARIABLE = re.compile(r"\s*[a-zA-Z]\s*=\s*([^=]+)")
# A power tower (an exponent that has its own exponent), an exponent of 6+ digits, a
# factorial of a 4+ digit number.
_TOO_LARGE = re.compile(
    r"\^\s*\{[^{}]*\^|\^\s*\d+\s*\^|\^\s*\{?\s*-?\d{6,}|\d{4,}\s*!|\\(?:prod|sum)_"
)


class _OwnTimeoutFilter(logging.Filter):
    """Drop math-verify's warning that its timeouts are off: we put our own limit around it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Timeout is disabled")


for _name in ("math_verify.parser", "math_verify.grader"):
    logging.getLogger(_name).addFilter(_OwnTimeoutFilter())

# The plain-number reader under its old name, for `rlvr.evaluate.vote` (voting keys).
as_fraction = to_fraction


def numbers_equal(answer: str, gold: str) -> bool | None:
    """Exact comparison when both are plain numbers; None when either is not (undecided).

    A percent sign is a unit: "50%" equals "50%" and "50"; and, by value, "0.5" (so a gold
    "50\\%" accepts "50", "50%" and "0.5"; a gold "0.5" accepts "50%" and "0.5").
    """
    answer_body, answer_percent = split_percent(answer)
    gold_body, gold_percent = split_percent(gold)
    answer_value, gold_value = to_fraction(answer_body), to_fraction(gold_body)
    if answer_value is None or gold_value is None:
        return None
    if answer_percent == gold_percent or answer_value == gold_value:
        return answer_value == gold_value
    if answer_percent:
        return answer_value / 100 == gold_value
    return answer_value == gold_value / 100


def exact_equal(answer: str, gold: str) -> bool | None:
    """The exact fast paths, tried in order; None when none applies (math-verify decides).

    Plain numbers (`numbers_equal`); intervals and pairs of plain numbers ("[1, 2)"), equal
    when brackets and endpoints are; numbers with a rational square ("2\\sqrt{3}" ==
    "\\sqrt{12}"), equal when sign and square are; polynomials in one letter ("(x+1)^2" ==
    "x^2+2x+1"), equal when their coefficients are. "x = 3" against "3" compares the 3, as
    math-verify does. No sympy here, so no time limit is needed.
    """
    answer, gold = _rhs(answer, gold), _rhs(gold, answer)
    equal = numbers_equal(answer, gold)
    if equal is not None:
        return equal
    answer_interval, gold_interval = interval_parts(answer), interval_parts(gold)
    if answer_interval is not None and gold_interval is not None:
        return answer_interval == gold_interval
    answer_square, gold_square = signed_square(answer), signed_square(gold)
    if answer_square is not None and gold_square is not None:
        return answer_square == gold_square
    return _polynomials_equal(answer, gold)


def _polynomials_equal(answer: str, gold: str) -> bool | None:
    """Equal coefficients in the same letter ("(x+1)^2" == "x^2+2x+1"); None if not both."""
    answer_poly, gold_poly = polynomial(answer), polynomial(gold)
    if answer_poly is None or gold_poly is None:
        return None
    (answer_letter, answer_coefficients), (gold_letter, gold_coefficients) = answer_poly, gold_poly
    constant = len(answer_coefficients) == 1 and len(gold_coefficients) == 1
    if answer_letter != gold_letter and not constant and None not in (answer_letter, gold_letter):
        return None  # "t^2" against "x^2": a renamed variable is math-verify's call
    return answer_coefficients == gold_coefficients


def _rhs(text: str, other: str) -> str:
    """"x = 3" -> "3" when `other` names no variable; any other text is returned unchanged."""
    match = _ONE_VARIABLE.fullmatch(text.strip().strip("$"))
    if match is None or "=" in other:
        return text
    return match[1]


def too_large(text: str) -> bool:
    """True for answers sympy could take minutes to evaluate: towers, huge powers, factorials.

    "9^{9^{9}}", "10^{100000}", "5000!" (whole seconds each in sympy, longer than any sane
    time limit); "2^{10}", "10!" are not. So is any answer over `MAX_ANSWER_CHARS`: sympy
    spends seconds inside single C calls on a 20,000-digit literal, where no alarm reaches.
    """
    return len(text) > MAX_ANSWER_CHARS or _TOO_LARGE.search(text) is not None


def _as_latex(text: str) -> str:
    """Wrap a bare answer in `$...$` so math-verify's LaTeX extraction sees it."""
    return text if "$" in text or "\\boxed" in text else f"${text}$"


def _parse(text: str) -> list:
    """math-verify parse with its own (signal) timeout off and its errors raised, not hidden."""
    return math_verify.parse(_as_latex(text), parsing_timeout=None, raise_on_error=True)


@lru_cache(maxsize=65536)
def _parse_gold(gold: str) -> tuple:
    """Parse a gold answer once; the same gold is checked against every sample of its group."""
    return tuple(_parse(gold))


def _math_verify_equal(answer: str, gold: str) -> bool | None:
    """True/False from math-verify; None when either side parses to nothing."""
    gold_parsed = _parse_gold(gold)
    answer_parsed = _parse(answer)
    if not gold_parsed or not answer_parsed:
        return None
    return math_verify.verify(
        list(gold_parsed), answer_parsed, timeout_seconds=None, raise_on_error=True
    )


def _short(text: str, limit: int = 80) -> str:
    """Cut long answers so that a reason stays one readable line."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True)
class MathVerifier:
    """Score 1 if the completion's final answer equals the gold answer, else 0.

    The answer is found by the extractors named in `extract`, tried in that order; the first
    one that finds something wins ("boxed": the last `\\boxed{...}`, an empty one ending the
    search; "answer_tag": the last `<answer>...</answer>`; "answer_phrase": the last "the
    answer is ..."; "last_number": the last number outside restated questions, or the last
    choice letter when the gold is one). Then, in order:

    - a gold letter (A-J) is compared with the one letter the answer names ("(b)" == "B");
    - an answer listing several items ("19 or 20") against a one-item gold is a hedge: 0;
    - plain numbers on both sides, after normalisation, are compared exactly as fractions
      (also intervals of plain numbers and square roots: see `exact_equal`);
    - an answer too large to evaluate ("9^{9^{9}}") scores 0 unless it reads as the gold;
    - anything else is checked by math-verify, limited to `timeout_s` seconds of wall time.

    Attributes:
        extract: extractor names from `EXTRACTORS`, in priority order.
        timeout_s: wall-clock limit for one math-verify check, in seconds.
        max_chars: longer responses score 0 without being read (bounds the regex work).
    """

    extract: tuple[str, ...] = ("boxed", "answer_tag", "answer_phrase", "last_number")
    timeout_s: float = 2.0
    max_chars: int = 20000

    def __post_init__(self) -> None:
        unknown = [name for name in self.extract if name not in EXTRACTORS]
        if unknown or not self.extract:
            raise ValueError(
                f"unknown answer extractor(s) {unknown} in extract={self.extract!r}; "
                f"valid names are {sorted(EXTRACTORS)}"
            )
        if not self.timeout_s > 0:
            raise ValueError(f"timeout_s must be positive, got {self.timeout_s!r}")
        if not self.max_chars > 0:
            raise ValueError(f"max_chars must be positive, got {self.max_chars!r}")

    def __call__(self, *, response: str, gold: str) -> Verdict:
        """Check `response` against `gold`; see the class docstring for the rules."""
        if not response.strip():
            return Verdict(0.0, "empty completion")
        if len(response) > self.max_chars:
            return Verdict(0.0, f"response too long ({len(response)} chars)")
        choice = is_choice_gold(gold)
        found = extract_answer(response, self.extract, choice=choice)
        if found is None and "boxed" in self.extract and extract_boxed(response) == "":
            return Verdict(0.0, "empty or unclosed last box", ("empty_box",))
        if found is None:
            return Verdict(0.0, "no answer found")
        method, answer = found
        if choice:
            return _judge_choice(method, answer, gold)
        if len(top_level_items(answer)) > 1 and len(top_level_items(gold)) == 1:
            return Verdict(0.0, f"hedged: several answers in {_short(answer)}", ("hedge",))
        return self._judge(method, answer, gold)

    def _judge(self, method: str, answer: str, gold: str) -> Verdict:
        """Turn one equivalence check, or the way it failed, into a Verdict."""
        equal = exact_equal(answer, gold)
        if equal is None and too_large(answer) and not too_large(gold):
            return Verdict(0.0, f"too large to evaluate: {_short(answer)}", ("too_large",))
        if equal is None:
            try:
                equal = run_with_time_limit(_math_verify_equal, self.timeout_s, answer, gold)
            except VerifierTimeout:
                return Verdict(0.0, f"timed out after {float(self.timeout_s)} s", ("timeout",))
            except Exception as error:  # deliberate: one odd answer must not stop training
                return Verdict(0.0, f"verifier error: {type(error).__name__}", ("error",))
        return _verdict(method, answer, gold, equal)


def _judge_choice(method: str, answer: str, gold: str) -> Verdict:
    """A multiple-choice gold: the answer must name exactly one letter, the same one."""
    letter = choice_letter(answer)
    if letter is None:
        return Verdict(0.0, f"no single choice in {_short(answer)}, expected {_short(gold)}")
    return _verdict(method, letter, gold, letter == choice_letter(gold))


def _verdict(method: str, answer: str, gold: str, equal: bool | None) -> Verdict:
    """The Verdict for a finished comparison: correct, wrong, or unparsable (None)."""
    if equal is None:
        return Verdict(
            0.0, f"unparsable: got {_short(answer)}, expected {_short(gold)}", ("unparsed",)
        )
    if equal:
        return Verdict(1.0, f"correct (via {method})")
    return Verdict(0.0, f"wrong: got {_short(answer)}, expected {_short(gold)}")
