"""A word answer stated in a final sentence: "The function is even." against `\\text{even}`.

MATH, Omni-MATH and TheoremQA have golds that are words ("even", "diverges", "True"), and
models state them in a sentence rather than alone. `states_text_gold` credits a reply whose
final sentence (outside restated questions) is short and ends in the gold's words, and
refuses one that negates or hedges anywhere in that sentence ("The function is not even.",
"It is probably even.", "It is either odd or even."). Golds with a digit or maths are never
read this way: numbers keep every rule of the number extractors.
"""

from __future__ import annotations

import re

from rlvr.rewards.math.spans import without_questions

_TEXT = re.compile(r"\\(?:text|textbf|mathrm|mbox)\s*\{([^{}]*)\}")
_GOLD_WORDS = re.compile(r"[A-Za-z]{2,}(?:[ -][A-Za-z]{2,}){0,2}")
# The final sentence: after the last sentence end, up to the reply's own closing stop.
_FINAL = re.compile(r"(?:^|[.!?:;\n])\s*(?P<s>[^.!?:;\n]+?)\s*[.!]?\s*$")
_WORD = re.compile(r"[A-Za-z]+(?:'[a-z]+)?")
_NEGATION = re.compile(
    r"\b(?:not|no|never|neither|nor|none|cannot|can't|isn't|aren't|wasn't|doesn't|don't|"
    r"won't|fails?|false|un\w+|non\w*)\b|n't\b",
    re.IGNORECASE,
)
_HEDGE = re.compile(
    r"\b(?:or|either|maybe|might|could|perhaps|possibly|probably|likely|guess|think|seems?|"
    r"unsure|unclear|if|whether|assume|suppose)\b",
    re.IGNORECASE,
)
MAX_SENTENCE_WORDS = 12


def text_gold(gold: str) -> list[str] | None:
    """The lower-case words of a gold that is one to three words ("\\text{even}"), else None."""
    plain = _TEXT.sub(r"\1", gold).strip().strip("$").strip().rstrip(".")
    if not _GOLD_WORDS.fullmatch(plain):
        return None
    return plain.lower().replace("-", " ").split()


def states_text_gold(response: str, gold: str) -> bool:
    """True when the reply's short final sentence ends in the word gold, unnegated, unhedged."""
    words = text_gold(gold)
    if words is None or len(response) > 4000:
        return False
    final = _FINAL.search(without_questions(response.strip())[-400:])
    if final is None:
        return False
    sentence = _TEXT.sub(r"\1", final["s"]).replace("$", " ")
    said = [w.lower() for w in _WORD.findall(sentence)]
    if not 2 <= len(said) <= MAX_SENTENCE_WORDS or said[-len(words):] != words:
        return False
    before = " ".join(said[: -len(words)])  # the gold itself may be "no solution" or "false"
    return not (_NEGATION.search(before) or _HEDGE.search(before) or re.search(r"\d", sentence))
