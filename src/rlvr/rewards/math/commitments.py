"""Every final answer a reply commits to, and the hedge rule: two different ones score 0.

Hedging doubles a policy's chances (a box for one reading, an answer phrase or tag for another),
so a reply that commits to two different answers, in any form, is a hedge (reason "hedge",
flag "hedge") under every extraction order and template. Commitments are:

- boxes (`\\boxed{}`, `\\fbox{}`); boxes listed in one statement ("$\\boxed{2}$ and
  $\\boxed{3}$") are one multi-part answer, boxes joined by "or" or a hedge word are a hedge;
- answer tags, `<answer>...</answer>` in any case and with attributes;
- answer phrases ("the answer is 4", "Final answer: 4", GSM8K's "#### 4") whose answer holds a
  digit or maths; a phrase about one part ("the answer to part (a) is") is not the final answer,
  nor one that negates ("the answer is not 5"), nor one around a box or tag it repeats.

Not read: the reasoning inside `<think>...</think>` (it commits to nothing) and restated
questions (sentences that end in "?": `spans.without_question_sentences`). Two commitments agree when they are equal as
answers (`compare.Comparison`, both ways), or one's items are among the other's ("2, 3"
then "3"). A later different answer replaces the earlier one only as a retraction: a revision
word between them ("wait", "no:", "on reflection", "I made a mistake") and no hedge or
condition ("if", "alternatively", "or", "maybe", "otherwise", a note to the grader).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from rlvr.rewards.math.compare import Comparison
from rlvr.rewards.math.extract import ANSWER_PHRASE, box_link, box_spans, phrase_value
from rlvr.rewards.math.normalize import choice_letter, clean, top_level_items
from rlvr.rewards.math.spans import few_words, without_question_sentences

_TAG = re.compile(r"<answer\b[^<>]{0,80}>(.*?)</answer\s*>", re.DOTALL | re.IGNORECASE)
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
_PART = re.compile(r"(?:final answer|answer)s?\s+(?:to|for)\s", re.IGNORECASE)
_NEGATED = re.compile(r"^\W*(?:not|never|no longer)\b", re.IGNORECASE)
# A revision ("wait", "that is wrong") or a conclusion ("so", "finally"): the later answer is
# the one the reply ends on, the earlier one a step or a draft.
_RETRACTION = re.compile(
    r"\b(?:wait|actually|no\b(?=\s*[,:.!;])|oops|mistake|wrong|error|incorrect|correct(?:ion|ed|ing)|"
    r"re-?check\w*|redo|re-?calculat\w*|re-?comput\w*|reconsider\w*|revis\w*|"
    r"on (?:second thought|reflection)|scratch that|instead|rather|hmm+|"
    r"so|thus|hence|therefore|final(?:ly)?|then|now|after|gives?|giving)\b",
    re.IGNORECASE,
)
_CONDITION = re.compile(
    r"\b(?:if|alternatively|alternative|otherwise|unless|or|either|maybe|might|could|perhaps|"
    r"possibly|probably|though|although|also|in case|grader|reference|expected|graded?)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Commitment:
    """One committed answer: where it is in the reply, its form, and the answer as written."""

    start: int
    end: int
    kind: str  # "box" | "tag" | "phrase"
    value: str
    hedged_with: str | None = None  # boxes joined by "or": the other candidate


def blank(text: str, pattern: re.Pattern) -> str:
    """`text` with each match of `pattern` turned into spaces, every other character in place."""
    return pattern.sub(lambda m: " " * len(m[0]), text) if pattern.search(text) else text


def commitments(text: str) -> list[Commitment]:
    """The reply's commitments in reading order (see the module docstring)."""
    read = without_question_sentences(blank(text, _THINK))
    found = _box_groups(read) + _tags(read)
    taken = [(c.start, c.end) for c in found]
    found += [c for c in _phrases(read) if not any(a < c.end and c.start < b for a, b in taken)]
    return sorted(found, key=lambda c: c.start)


def _box_groups(text: str) -> list[Commitment]:
    """Closed, non-empty top-level boxes, those listed in one statement joined as one answer."""
    spans = [s for s in box_spans(text) if s[2]]
    spans = [s for s in spans if not any(o[0] < s[0] and s[1] <= o[1] for o in spans)]  # nested
    groups: list[Commitment] = []
    for start, end, content in spans:
        last = groups[-1] if groups else None
        link = box_link(text[last.end : start]) if last is not None else None
        if link is None:
            groups.append(Commitment(start, end, "box", content))
        elif link == " or " and content != last.value:
            groups[-1] = Commitment(last.start, end, "box", last.value, hedged_with=content)
        else:
            groups[-1] = Commitment(last.start, end, "box", f"{last.value}, {content}", last.hedged_with)
    return groups


def _tags(text: str) -> list[Commitment]:
    return [Commitment(m.start(), m.end(), "tag", m[1].strip()) for m in _TAG.finditer(text) if m[1].strip()]


def _phrases(text: str) -> list[Commitment]:
    found = []
    if "nswer" in text or "答案" in text:
        for match in ANSWER_PHRASE.finditer(text):
            value = phrase_value(text, match)
            if value and _is_answer(value) and not _PART.match(match[0]):
                found.append(Commitment(match.start(), match.end(), "phrase", value))
    for match in re.finditer(r"####[ \t]*([^\n]+)", text):
        found.append(Commitment(match.start(), match.end(), "phrase", match[1].strip()))
    return found


def _is_answer(value: str) -> bool:
    """A phrase's value that is an answer: maths with at most a few words ("4", "x = 4"), not
    "correct, score 1.0", "not 5" or "the sum of the roots"."""
    return bool(re.search(r"[\d$\\]", value)) and few_words(value) and not _NEGATED.match(value)


def find_hedge(text: str, timeout_s: float) -> tuple[str, str] | None:
    """The first two different answers `text` commits to and does not retract, else None.

    Answers are compared as the verifier compares an answer with a gold, all comparisons of one
    reply sharing `timeout_s` of math-verify time; one it cannot decide counts as different."""
    return hedge_between(commitments(text), text, answers_agree(timeout_s))


def answers_agree(timeout_s: float) -> Callable[[str, str], bool]:
    """agree(a, b): a and b are the same answer (the same letter, or equal either way round)."""
    comparison = Comparison(timeout_s)

    def agree(first: str, second: str) -> bool:
        letters = choice_letter(first), choice_letter(second)
        if letters[0] is not None and letters[0] == letters[1]:
            return True
        try:
            return comparison.equal(first, second) is True or comparison.equal(second, first) is True
        except Exception:  # deliberate: a timeout or an odd form is undecided, so different
            return False

    return agree


def hedge_between(found: list[Commitment], text: str, agree: Callable[[str, str], bool]) -> tuple[str, str] | None:
    """`find_hedge` on the commitments `found` in `text`, answers compared by `agree`."""
    standing: Commitment | None = None
    for commitment in found:
        if commitment.hedged_with is not None and not agree(commitment.value, commitment.hedged_with):
            return commitment.value, commitment.hedged_with
        if standing is not None and not _consistent(standing.value, commitment.value, agree):
            # a phrase's own words count ("Final answer: 4" concludes)
            upto = commitment.end if commitment.kind == "phrase" else commitment.start
            if not retracts(text[standing.end : upto]):
                return standing.value, commitment.value
        standing = commitment
    return None


def retracts(gap: str) -> bool:
    """True when the text between two answers withdraws the first without hedging."""
    return _RETRACTION.search(gap) is not None and _CONDITION.search(gap) is None


def _consistent(first: str, second: str, agree: Callable[[str, str], bool]) -> bool:
    """The same answer, or one's items among the other's ("2, 3" then "3")."""
    if first == second or agree(first, second):
        return True
    items = [top_level_items(clean(first)), top_level_items(clean(second))]
    small, large = sorted(items, key=len)
    return len(large) > 1 and all(any(item == x or agree(item, x) for x in large) for item in small)
