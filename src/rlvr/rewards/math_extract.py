"""Pull one answer string out of a maths completion.

Each extractor takes the completion and returns the answer as written, or None when it finds
nothing. `EXTRACTORS` maps a config name to one; `extract_answer` tries them in order.

Rules, each tested in tests/rewards/test_math_verifier.py:

- Several boxes: the last one counts (the model's final word).
- An empty or unclosed last box (`\\boxed{}`, a truncated `\\boxed{6`) is a failed answer:
  `extract_boxed` returns "" and `extract_answer` stops there with None, so no later
  extractor picks a stray number after it.
- Answer phrases ("the answer is", "final answer:", "answer ="): the last one counts; its
  answer runs to the end of that sentence or to a reason ("..., since ...").
- Last number: numbers in sentences that end in "?" are skipped (a restated question is not
  an answer); a final number that closes a list ("2, 3, 5 or 19") returns the whole list,
  which then fails as a hedge.
- Multiple-choice letters (`extract_last_choice`) replace the last number when the gold
  answer is a letter.
"""

from __future__ import annotations

import re
from typing import Callable

_BOX_OPEN = re.compile(r"\\boxed\s*\{")
_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)
# "The final answer is: 19." / "Answer: (B)" / "the answer to part (a) is $x=2$"; the answer
# runs to the end of its sentence (a full stop before a space or the end, or a newline).
_ANSWER_PHRASE = re.compile(
    r"(?:final answer|answer)(?:\s+(?:to|for)\s+[^.:\n]{0,40}?)?\**\s*"
    r"(?:is|was|would be|will be|should be|=|:)\s*:?\**\s*"
    r"(?P<answer>[^\n]{1,200}?)\**\s*(?:\.(?=\s|$)|\n|$)",
    re.IGNORECASE,
)
# The reason that follows an answer is not part of it: "19, since 12 + 7 = 19".
_REASON = re.compile(
    r"(?:,\s*|\s+)(?:since|because|as|which|so|given|from|where|when)\b.*", re.DOTALL
)
# A sentence that ends in "?" restates the question; its numbers are not answers.
# Matching starts only at a sentence start, so the scan stays linear in the text's length.
_QUESTION = re.compile(r"(?:(?<=[.?!\n])|^)(?:[^.?!\n]|\.(?=\d))*\?")
# A leading minus counts only where it cannot be a binary minus ("10-3" ends in 3, not -3).
# One number: "1,234" and "1 234" (thousands), "3/4", "2 1/2" (mixed), "\frac{1}{2}",
# "0.\overline{3}" / "0.(3)" (repeating), with an optional trailing percent sign.
_NUMBER = re.compile(
    r"(?:(?<![\w)}\]])-|(?<![\d.]))"
    r"(?:\\[dt]?frac\s*\{\d+\}\s*\{\d+\}"
    r"|\d+ \d+/\d+(?![\d/])"
    r"|(?:\d{1,3}(?:(?:,|\{,\}|\\,| )\d{3})+(?!\d)|\d+)"
    r"(?:\.\d*(?:\\overline\s*\{\d+\}|\(\d+\))|\.\d+)?(?:/\d+)?)"
    r"(?:\s*\\?%)?"
)
# Between two numbers (or letters), only spaces and list separators: "2, 3, 5 or 19" is a
# hedge, not an answer.
_LIST_GAP = re.compile(r"[ \t]*(?:[,;/][ \t]*)?(?:(?:or|and)[ \t]+)?")
_CHOICE_MENTION = re.compile(
    r"\(([A-J])\)|(?<![\w(\\])([A-J])\)|(?:option|choice|answer)\s+([A-J])\b"
    r"|(?<![\w(\\])([A-J])(?=\s*[.,;!]?\s*$|\s*[,;/]|\s+(?:or|and)\b)"
)


def extract_boxed(text: str) -> str | None:
    """Return the content of the last `\\boxed{...}`; "" if it is empty or unclosed; None if none.

    Braces are matched by depth, so `\\boxed{\\frac{1}{2}}` gives `\\frac{1}{2}`; a backslash
    escapes the next character, so `\\{` and `\\}` do not count. Only the last box is
    considered, and an earlier box is never used instead (the model's final word counts).
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
            return text[start:i].strip()
        i += 1
    return ""


def extract_answer_tag(text: str) -> str | None:
    """Return the stripped content of the last `<answer>...</answer>`, or None if none/empty."""
    matches = _ANSWER_TAG.findall(text)
    if not matches:
        return None
    return matches[-1].strip() or None


def extract_answer_phrase(text: str) -> str | None:
    """Return what follows the last "answer is" / "final answer:", up to a reason, or None."""
    last = None
    for last in _ANSWER_PHRASE.finditer(text):
        pass
    if last is None:
        return None
    answer = _REASON.sub("", last["answer"]).strip().strip("*").strip()
    return answer or None


def _without_questions(text: str) -> str:
    """Blank out sentences that end in "?", keeping every other character where it was."""
    if "?" not in text:
        return text
    return _QUESTION.sub(lambda match: " " * len(match[0]), text)


def _last_run(matches: list[re.Match], text: str) -> str | None:
    """The last match, or the list it closes ("2, 3, 19") when only separators come between.

    The list comes back joined by ", " whatever separated it, so that `top_level_items`
    sees every item of "1 2 3" or "18 or 19" and the verifier rejects it as a hedge.
    """
    if not matches:
        return None
    first = len(matches) - 1
    while first > 0 and _LIST_GAP.fullmatch(text, matches[first - 1].end(), matches[first].start()):
        first -= 1
    return ", ".join(match[0] for match in matches[first:])


def extract_last_number(text: str) -> str | None:
    """Return the last number as written ("-3", "0.50", "3/4", "1,234", "2 1/2"), or None.

    Restated questions are skipped, and a number closing a list returns the list (see the
    module docstring).
    """
    text = _without_questions(text)
    return _last_run(list(_NUMBER.finditer(text)), text)


def extract_last_choice(text: str) -> str | None:
    """Return the last multiple-choice mention ("(B)", "B)", "option B", a final "B"), or None.

    A letter closing a list ("A, B, C or D") returns the list, which then fails as a hedge.
    """
    text = _without_questions(text)
    return _last_run(list(_CHOICE_MENTION.finditer(text)), text)


EXTRACTORS: dict[str, Callable[[str], str | None]] = {
    "boxed": extract_boxed,
    "answer_tag": extract_answer_tag,
    "answer_phrase": extract_answer_phrase,
    "last_number": extract_last_number,
}


def extract_answer(
    text: str, methods: tuple[str, ...], choice: bool = False
) -> tuple[str, str] | None:
    """Try the extractors named in `methods`, in order; the first that finds something wins.

    Returns `(method, answer)`, or None when no method finds anything. A later method is
    never consulted once an earlier one succeeds, even if its answer would be correct; an
    empty or unclosed last box also stops the search, with None. With `choice` (the gold is
    a letter), "last_number" is replaced by `extract_last_choice`.
    """
    for method in methods:
        if choice and method == "last_number":
            answer = extract_last_choice(text)
        else:
            answer = EXTRACTORS[method](text)
        if answer == "":  # an empty or unclosed last box: a failed answer, not a missing one
            return None
        if answer is not None:
            return method, answer
    return None
