"""Reward for maths answers: extract the final answer, then check it against the gold one.

Two stages, each small and separately testable:

1. Extraction (`EXTRACTORS`, `extract_answer`): pull one answer string out of the completion.
2. Equivalence (`numbers_equal`, `_math_verify_equal`): plain numbers are compared exactly with
   `fractions.Fraction`; anything else (LaTeX, expressions, sets, ...) goes to math-verify
   under our own wall-clock limit (see `time_limit.py` for why not math-verify's).
"""

from __future__ import annotations

import logging

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Callable

import math_verify

from rlvr.rewards.time_limit import VerifierTimeout, run_with_time_limit
from rlvr.rewards.verdict import Verdict

_BOX_OPEN = re.compile(r"\\boxed\s*\{")
_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)
# A leading minus counts only where it cannot be a binary minus ("10-3" ends in 3, not -3);
# "1,234" is one number (thousands separators, as in GSM8K), "3/4" is one fraction.
_NUMBER = re.compile(
    r"(?:(?<![\w)}\]])-|(?<![\d.]))"
    r"(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)"
    r"(?:\.\d+)?(?:/\d+)?"
)
_PLAIN_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:/-?\d+(?:\.\d+)?)?")
_THOUSANDS = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?")



class _OwnTimeoutFilter(logging.Filter):
    """Drop math-verify's warning that its timeouts are off: we put our own limit around it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Timeout is disabled")


for _name in ("math_verify.parser", "math_verify.grader"):
    logging.getLogger(_name).addFilter(_OwnTimeoutFilter())

def extract_boxed(text: str) -> str | None:
    """Return the content of the last `\\boxed{...}`, or None.

    Braces are matched by depth, so `\\boxed{\\frac{1}{2}}` gives `\\frac{1}{2}`; a backslash
    escapes the next character, so `\\{` and `\\}` do not count. Only the last box is
    considered: if it is empty or never closed (a truncated completion), there is no boxed
    answer, and an earlier box is not used instead (the model's final word is what counts).
    """
    opens = list(_BOX_OPEN.finditer(text))
    if not opens:
        return None
    start = opens[-1].end()
    depth, i = 1, start
    while i < len(text):
        char = text[i]
        if char == "\\":
            i += 2
            continue
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth == 0:
            content = text[start:i].strip()
            return content or None
        i += 1
    return None


def extract_answer_tag(text: str) -> str | None:
    """Return the stripped content of the last `<answer>...</answer>`, or None if none/empty."""
    matches = _ANSWER_TAG.findall(text)
    if not matches:
        return None
    return matches[-1].strip() or None


def extract_last_number(text: str) -> str | None:
    """Return the last number in `text` as written ("-3", "0.50", "3/4", "1,234"), or None."""
    matches = _NUMBER.findall(text)
    return matches[-1] if matches else None


EXTRACTORS: dict[str, Callable[[str], str | None]] = {
    "boxed": extract_boxed,
    "answer_tag": extract_answer_tag,
    "last_number": extract_last_number,
}


def extract_answer(text: str, methods: tuple[str, ...]) -> tuple[str, str] | None:
    """Try the extractors named in `methods`, in order; the first that finds something wins.

    Returns `(method, answer)`, or None when no method finds anything. A later method is
    never consulted once an earlier one succeeds, even if its answer would be correct.
    """
    for method in methods:
        answer = EXTRACTORS[method](text)
        if answer is not None:
            return method, answer
    return None


def as_fraction(text: str) -> Fraction | None:
    """Read `text` as a plain number (int, decimal, a/b; spaces ignored), else None.

    "0.50" -> 1/2, "-3" -> -3, "3/4" -> 3/4, "1,234" -> 1234. Exponents, LaTeX and
    anything else give None, and so does a zero denominator.
    """
    compact = "".join(text.split())
    if _THOUSANDS.fullmatch(compact):
        compact = compact.replace(",", "")
    if not _PLAIN_NUMBER.fullmatch(compact):
        return None
    numerator, _, denominator = compact.partition("/")
    try:
        value = Fraction(numerator)
        return value / Fraction(denominator) if denominator else value
    except ZeroDivisionError:
        return None
    except ValueError:  # over Python's int-from-string digit limit; math-verify decides
        return None


def numbers_equal(answer: str, gold: str) -> bool | None:
    """Exact comparison when both are plain numbers; None when either is not (undecided)."""
    answer_value, gold_value = as_fraction(answer), as_fraction(gold)
    if answer_value is None or gold_value is None:
        return None
    return answer_value == gold_value


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
    one that finds something wins ("boxed": the last `\\boxed{...}`; "answer_tag": the last
    `<answer>...</answer>`; "last_number": the last number in the text). Plain numbers on
    both sides are compared exactly as fractions ("0.50" == "1/2"); anything else is checked
    by math-verify, the whole check limited to `timeout_s` seconds of wall time.

    Attributes:
        extract: extractor names from `EXTRACTORS`, in priority order.
        timeout_s: wall-clock limit for one math-verify check, in seconds.
        max_chars: longer responses score 0 without being read (bounds the regex work).
    """

    extract: tuple[str, ...] = ("boxed", "answer_tag", "last_number")
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

    def __call__(self, response: str, gold: str) -> Verdict:
        """Check `response` against `gold`; see the class docstring for the rules."""
        if not response.strip():
            return Verdict(0.0, "empty completion")
        if len(response) > self.max_chars:
            return Verdict(0.0, f"response too long ({len(response)} chars)")
        found = extract_answer(response, self.extract)
        if found is None:
            return Verdict(0.0, "no answer found")
        method, answer = found
        return self._judge(method, answer, gold)

    def _judge(self, method: str, answer: str, gold: str) -> Verdict:
        """Turn one equivalence check, or the way it failed, into a Verdict."""
        equal = numbers_equal(answer, gold)
        if equal is None:
            try:
                equal = run_with_time_limit(_math_verify_equal, self.timeout_s, answer, gold)
            except VerifierTimeout:
                return Verdict(0.0, f"timed out after {float(self.timeout_s)} s", ("timeout",))
            except Exception as error:  # deliberate: one odd answer must not stop training
                return Verdict(0.0, f"verifier error: {type(error).__name__}", ("error",))
        if equal is None:
            return Verdict(
                0.0, f"unparsable: got {_short(answer)}, expected {_short(gold)}", ("unparsed",)
            )
        if equal:
            return Verdict(1.0, f"correct (via {method})")
        return Verdict(0.0, f"wrong: got {_short(answer)}, expected {_short(gold)}")
