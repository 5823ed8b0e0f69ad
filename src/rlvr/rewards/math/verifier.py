"""Reward for maths answers: extract the final answer, then check it against the gold one.

Three stages, each small and separately testable:

1. Extraction (`math/extract.py`, `math/spans.py`): pull one answer string out of the
   completion, and out of the gold answer by the same path (a gold may be a worked solution,
   a boxed value or a sentence). Unicode maths ("2½", "√3", "10²³") is first rewritten as
   LaTeX on both sides (`math/unicode.py`).
2. Normalisation (`math/normalize.py`), on both sides: delimiters, mixed numbers, thousands
   separators, currency, units and degrees (dropped, never converted), percentages,
   repeating decimals, multiple-choice letters, hedges.
3. Equivalence (`math/compare.py`): shapes (lists, tuples, sets, intervals, inequalities,
   equations), exact numbers, then math-verify under our own wall-clock limit (see
   `time_limit.py` for why not math-verify's), except answers too large to evaluate.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache

from rlvr.rewards.math.compare import (
    Comparison,
    MAX_ANSWER_CHARS,
    math_verify_equal,
    numbers_equal,
    parse_gold,
    text_key,
    too_large,
)
from rlvr.rewards.math.extract import (
    DEFAULT_EXTRACT,
    EXTRACTORS,
    extract_answer,
    extract_boxed,
    extract_last_choice,
    extract_last_number,
)
from rlvr.rewards.math.commitments import find_hedge
from rlvr.rewards.math.sentence import states_text_gold
from rlvr.rewards.math.spans import few_words, without_questions
from rlvr.rewards.math.unicode import unicode_to_latex
from rlvr.rewards.math.structure import as_interval, shape
from rlvr.rewards.math.normalize import (
    choice_letter,
    choice_option,
    clean,
    is_choice_gold,
    option_text,
    to_fraction,
    top_level_items,
)
from rlvr.rewards.time_limit import VerifierTimeout
from rlvr.rewards.verdict import Verdict

__all__ = [
    "DEFAULT_EXTRACT",
    "EXTRACTORS",
    "MAX_ANSWER_CHARS",
    "MathVerifier",
    "as_fraction",
    "exact_equal",
    "extract_answer",
    "extract_boxed",
    "extract_last_choice",
    "extract_last_number",
    "gold_answer",
    "numbers_equal",
    "too_large",
]

# The plain-number reader under its old name, for `rlvr.evaluate.vote` (voting keys).
as_fraction = to_fraction
# Old private names, kept for callers and tests that reach in.
_parse_gold = parse_gold
_math_verify_equal = math_verify_equal


# OlympiadBench stores `final_answer` as a JSON list of `$...$` strings: '["$(2,2,2)$"]'.
_STRING_LIST = re.compile(r'\[\s*"(?:[^"\\]|\\.)*"(?:\s*,\s*"(?:[^"\\]|\\.)*")*\s*\]')
_CONTROL = re.compile(r"[\x00-\x1f]")


def listed_answers(gold: str) -> list[str] | None:
    """The strings of a gold that is a JSON list of strings, else None.

    Read as JSON when that gives no control characters; otherwise (a list written with single
    backslashes, where JSON would read the `\\f` of `\\frac` as a form feed) as written."""
    if not _STRING_LIST.fullmatch(gold):
        return None
    try:
        items = json.loads(gold)
    except json.JSONDecodeError:
        items = None
    if items is None or any(_CONTROL.search(item) for item in items):
        items = re.findall(r'"((?:[^"\\]|\\.)*)"', gold)
    return items if items and all(item.strip() for item in items) else None


@lru_cache(maxsize=65536)
def gold_answer(gold: str) -> str:
    """The answer a gold string states, by the response's extractors: a box or tag; else the
    gold itself when it is maths with few words ("x = 4", "\\frac{-b \\pm \\sqrt{b^2-4ac}}{2a}");
    else the answer phrase, final maths span or last number of the sentence it is. A JSON list
    of strings (OlympiadBench) is its one answer, or the multi-part answer "a, b" of several."""
    if (items := listed_answers(gold.strip())) is not None:
        return ", ".join(gold_answer(item) for item in items)
    gold = unicode_to_latex(gold)
    found = extract_answer(gold, ("boxed", "answer_tag", "whole"))
    if found is None and not few_words(gold):
        found = extract_answer(gold, ("answer_phrase", "math_span", "last_number"))
    return found[1] if found else gold.strip()


def exact_equal(answer: str, gold: str) -> bool | None:
    """The comparison without math-verify: True/False when decided, None when sympy is needed.

    Runs every sympy-free path of `Comparison.equal` (shapes, numbers, roots, polynomials,
    constant values); used by tests and by callers that want a guaranteed-fast answer.
    """
    comparison = Comparison(timeout_s=1e-9)
    comparison.deadline = float("-inf")
    try:
        return comparison.equal(answer, gold)
    except VerifierTimeout:
        return None


def _hedged(answer: str, gold: str) -> bool:
    """Several different answers ("19 or 20") against a gold that is one plain value."""
    items = top_level_items(clean(answer))
    if len(items) < 2 or shape(clean(gold)).kind != "single":
        return False
    if "\\cup" in gold and all(as_interval(item) for item in items):
        return False  # "x < -2 or x > 3" is one union of intervals
    return len({text_key(item) for item in items}) > 1


# A gold numeral with its base ("1011_2", "2A_{16}"), and the words that name a base.
_BASED_GOLD = re.compile(r"([0-9A-Za-z]+)_\{?(\d{1,2})\}?")
_BASE_NAMES = {2: "binary", 8: "octal", 16: "hexadecimal"}
_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def with_stated_base(answer: str, gold: str, response: str) -> str:
    """"1011" as "1011_2" when the gold is a base-2 numeral and the response's own text (not a
    question it restates) says base 2 ("so in base 2 it is $1011$", "in binary"); else as is.

    Rule 10 stays: the base is part of the answer, so bare digits with no base named anywhere
    ("\\boxed{204}" against "204_5") are still wrong. The digits must be valid in that base.
    """
    based = _BASED_GOLD.fullmatch(clean(gold))
    digits = clean(answer)
    if based is None or not re.fullmatch(r"[0-9A-Za-z]+", digits):
        return answer
    base = int(based[2])
    if not 2 <= base <= 36 or any(_DIGITS.find(d.upper()) not in range(base) for d in digits):
        return answer
    named = rf"\bbase[\s-]*\{{?{base}\}}?(?!\d)"
    if base in _BASE_NAMES:
        named += rf"|\b{_BASE_NAMES[base]}\b"
    return f"{digits}_{{{base}}}" if re.search(named, without_questions(response), re.I) else answer


_APPROX_GOLD = re.compile(r"\s*\$?\s*(?:\\approx|≈)\s*(?=[-\d.])")
# Extractors that read prose: a word gold stated in a sentence is read before them.
_PROSE = ("whole", "math_span", "last_number")


def _short(text: str, limit: int = 80) -> str:
    """Cut long answers so that a reason stays one readable line."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True)
class MathVerifier:
    """Score 1 if the completion's final answer equals the gold answer, else 0.

    The answer is found by the extractors named in `extract`, tried in that order; the first
    one that finds something wins ("boxed": the last box, with the boxes listed beside it,
    an empty one ending the search; "answer_tag": the last `<answer>...</answer>`;
    "answer_phrase": the last "the answer is ..."; "whole": a reply that is only an answer;
    "math_span": the final statement's last `$...$`; "last_number": the last number outside
    restated questions, or the last choice letter when the gold is one). The gold answer is
    read by the same extractors. Then, in order:

    - a gold letter (A-J) is compared with the one letter the answer names ("(b)" == "B");
    - an answer listing several items ("19 or 20") against a one-item gold is a hedge: 0;
    - otherwise `compare.Comparison` decides, math-verify limited to `timeout_s`
      seconds of wall time for the whole check; an answer too large to evaluate
      ("9^{9^{9}}") scores 0 unless it reads as the gold.

    Attributes:
        extract: extractor names from `EXTRACTORS`, in priority order.
        timeout_s: wall-clock limit for one check's math-verify calls, in seconds.
        max_chars: longer responses score 0 without being read (bounds the regex work).
        rounded_golds: decimal golds are rounded values (TheoremQA's float answers): a more
            precise answer that rounds to the gold is right. Without it only a gold written
            "\\approx 2.236" (or one of 10+ digits) is read so (math/exact.py).
    """

    extract: tuple[str, ...] = DEFAULT_EXTRACT
    timeout_s: float = 2.0
    max_chars: int = 20000
    rounded_golds: bool = False

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
        if "<think>" in response and "</think>" not in response.rsplit("<think>", 1)[1]:
            # the reasoning never ended (cut off mid-thought): nothing after it was committed
            return Verdict(0.0, "unclosed <think> block: no committed answer", ("unclosed_think",))
        rounded = self.rounded_golds
        if marked := _APPROX_GOLD.match(gold):  # "\\approx 2.236": this gold is rounded
            gold, rounded = gold[marked.end():], True
        gold = gold_answer(gold) if len(gold) <= self.max_chars else gold
        response = unicode_to_latex(response)  # "2½", "10²³", "√3": as the LaTeX they mean
        if (hedge := find_hedge(response, self.timeout_s)) is not None:
            return hedge_verdict(*hedge)
        if (option := choice_option(gold)) is not None:
            return self._option(response, *option)
        choice = is_choice_gold(gold)
        found = extract_answer(response, self.extract, choice=choice)
        if found is None and "boxed" in self.extract and extract_boxed(response) == "":
            return Verdict(0.0, "empty or unclosed last box", ("empty_box",))
        if (found is None or found[0] in _PROSE) and states_text_gold(response, gold):
            return Verdict(1.0, "correct (via final sentence)")  # "The function is even."
        if found is None:
            return Verdict(0.0, "no answer found")
        method, answer = found
        if choice:
            return _judge_choice(method, answer, gold)
        answer = with_stated_base(answer, gold, response) if "_" in gold else answer
        if _hedged(answer, gold):
            if not self._all_equal(answer, gold):
                return Verdict(0.0, f"hedge: several answers in {_short(answer)}", ("hedge",))
            answer = top_level_items(clean(answer))[0]  # "1/2 or 0.5": one value, twice
        return self._judge(method, answer, gold, rounded)

    def _option(self, response: str, letter: str, value: str) -> Verdict:
        """A gold that is one option with its value ("\\textbf{(E) } 2\\sqrt{5}"): an answer
        that names a letter is judged by the letter alone (a wrong letter with the right
        value is wrong, two letters a hedge); one that names none by the option's value."""
        found = extract_answer(response, self.extract, choice=True)
        if found is not None and _names_a_letter(found[1]):
            return _judge_choice(found[0], found[1], letter)
        plain = extract_answer(response, self.extract)
        if plain is not None and (named := choice_option(plain[1])) is not None:
            return _verdict(plain[0], named[0], letter, named[0] == letter)  # "(A) 27"
        return self(response=response, gold=value)

    def _all_equal(self, answer: str, gold: str) -> bool:
        """True when every item of a multi-item answer equals the gold ("1/2 or 0.5")."""
        comparison = Comparison(self.timeout_s)
        try:
            items = top_level_items(clean(answer))
            return all(comparison.equal(item, gold) is True for item in items)
        except Exception:  # deliberate: any failure here leaves the hedge verdict
            return False

    def _judge(self, method: str, answer: str, gold: str, rounded: bool = False) -> Verdict:
        """Turn one equivalence check, or the way it failed, into a Verdict."""
        comparison = Comparison(self.timeout_s, rounded_golds=rounded)
        try:
            equal = comparison.equal(answer, gold)
        except VerifierTimeout:
            return Verdict(0.0, f"timed out after {float(self.timeout_s)} s", ("timeout",))
        except Exception as error:  # deliberate: one odd answer must not stop training
            return Verdict(0.0, f"verifier error: {type(error).__name__}", ("error",))
        if comparison.too_large and not equal:
            return Verdict(0.0, f"too large to evaluate: {_short(answer)}", ("too_large",))
        return _verdict(method, answer, gold, equal)


def hedge_verdict(first: str, second: str) -> Verdict:
    """0 for a reply that commits to two different answers (math/commitments.py)."""
    return Verdict(0.0, f"hedge: commits to {_short(first, 40)} and to {_short(second, 40)}", ("hedge",))


def _names_a_letter(answer: str) -> bool:
    """True when some item of `answer` is a choice letter ("B", "(C) 12", "A, B")."""
    return any(choice_letter(item) for item in top_level_items(option_text(answer)))


def _judge_choice(method: str, answer: str, gold: str) -> Verdict:
    """A multiple-choice gold: the answer must name exactly one letter, the same one."""
    items = top_level_items(option_text(answer))  # "\\mathrm{(C)}\\,14": "\\," is no list
    letter = choice_letter(answer)
    if len(items) > 1 and len({choice_letter(item) for item in items}) > 1:
        letter = None  # "(A) or (B)": a hedge across choices
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
