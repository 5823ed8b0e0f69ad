"""Pull one answer string out of a maths completion (or out of a gold answer).

Each extractor takes the text and returns the answer as written, or None when it finds
nothing. `EXTRACTORS` maps a config name to one; `extract_answer` tries them in order.

Rules, each tested in tests/rewards/test_math_verifier.py:

- Boxes (`\\boxed{}`, `\\fbox{}`, nested braces matched by depth): after a revision the last
  box counts; boxes listed together in one final statement ("$\\boxed{2}$ and
  $\\boxed{3}$", "\\boxed{1} papers and \\boxed{2} bins") are one multi-part answer "2, 3";
  "or" or a hedge word between them ("it might also be") joins them with "or", so a hedge
  still reads as one; a revision word ("wait", "finally") leaves the last box alone. An empty or unclosed last box is a failed answer: "" stops the search.
- Answer phrases ("the answer is", "final answer:", "answer ="): the last one counts; its
  answer runs to the end of that sentence or to a reason ("..., since ..."). With no phrase,
  GSM8K's "#### 72" or a final line that is all markdown bold ("**Yes**", "__42__") is one.
- Whole response (`whole`): a short reply that is itself the answer, bare LaTeX, one
  `$...$` / `\\(...\\)` / `\\[...\\]` span, or a few plain words ("Monday").
- Last maths span (`math_span`): the last `$...$` / `\\(...\\)` / `\\[...\\]` of the last
  sentence that has one, when that sentence is not a question; else the final statement's
  plain maths ("Domain: (-\\infty, 0)", "so the line is y = 1 + 2x").
- Last number: numbers in sentences that end in "?" are skipped (a restated question is not
  an answer); a final number that closes a list ("2, 3, 5 or 19") returns the whole list,
  which then fails as a hedge.
- A reply that ends saying it cannot finish ("I'm not sure how to continue") gets nothing
  from the prose extractors (`whole`, `math_span`, `last_number`).
- Multiple-choice letters (`extract_last_choice`) replace the last number when the gold
  answer is a letter.
"""

from __future__ import annotations

import re
from typing import Callable

from rlvr.rewards.math.spans import (
    extract_math_span,
    extract_whole,
    without_question_sentences,
    without_questions,
)

_BOX_OPEN = re.compile(r"\\(?:boxed|fbox)\s*\{")
# "\\boxed 5": a box without braces holds the token after it, for every reader (the template
# too), as models write it; LaTeX itself would box one character.
_BRACELESS_BOX = re.compile(r"\\(?:boxed|fbox) +(?P<v>[^\s${}\\]{1,40})")
# An answer tag in any case, with attributes ("<Answer id=1>"): still the model's commitment.
_ANSWER_TAG = re.compile(r"<answer\b[^<>]{0,80}>(.*?)</answer\s*>", re.DOTALL | re.IGNORECASE)
_ANSWER_OPEN = re.compile(r"<answer\b[^<>]{0,80}>", re.IGNORECASE)
_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL)
# "The final answer is: 19." / "Answer: (B)" / "the answer to part (a) is $x=2$"; the answer
# runs to the end of its sentence (a full stop before a space or the end, or a newline).
_ANSWER_PHRASE = re.compile(
    r"(?:final answer|answer|最终答案|答案)(?:\s+(?:to|for)\s+[^.:\n]{0,40}?)?\**\s*"
    r"(?:is|was|would be|will be|should be|=|:|是|为)\s*:?\**\s*"
    r"(?P<answer>[^\n]{1,200}?)\**\s*(?:\.(?=\s|$)|\n|$)",
    re.IGNORECASE,
)
# The reason that follows an answer is not part of it: "19, since 12 + 7 = 19".
_REASON = re.compile(
    r"(?:,\s*|\s+)(?:since|because|as|which|so|given|from|where|when)\b.*|,\s*not\b.*", re.DOTALL
)
# What may stand between two boxes of one multi-part answer: delimiters, separators, a
# "\quad", a short label ("x =", "(b)"). A sentence end or a revision word is not in it.
_BOX_GAP = re.compile(
    r"(?:[\s$,;&]|\\[(),;:! ]|\\q?quad|\\text\{[^{}]{0,8}\}|and|or|\([a-z0-9]\)|"
    r"[a-zA-Z]_?\d?\s*=)*"
)
# A reply's last line when all of it is markdown bold: how chat models mark their answer.
_BOLD_LINE = re.compile(r"(?:^|\n)[ \t]*(\*\*|__)(?P<answer>[^*_\n]{1,200}?)\1[ \t.!]*$")
_PROSE_WORD = re.compile(r"(?<![\\a-zA-Z])[a-zA-Z]{2,}")
# Between two boxes of one sentence, a revision or a conclusion ("wait", "so the answer is")
# makes the later box replace the earlier; a hedge word ("might also be") makes the two
# candidates of one hedge; otherwise a few words with no sentence end ("papers and", "for
# part (a) and") only label the parts of one multi-part answer.
_REVISION = re.compile(
    r"\b(?:wait|actually|instead|correct(?:ion|ed|ing)?|mistake|wrong|error|oops|recheck|"
    r"re-?check|redo|revis\w*|no|so|thus|hence|therefore|answer|final(?:ly)?|then|now|hmm|"
    r"rather|after|gives?|giving)\b",
    re.IGNORECASE,
)
_HEDGE = re.compile(r"\b(?:maybe|might|could|perhaps|possibly|probably|or|either)\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?:](?=\s|$)|\n\s*\n")
_LABEL_WORDS = 6

_OR_GAP = re.compile(r"\bor\b")
# A leading minus counts only where it cannot be a binary minus ("10-3" ends in 3, not -3).
# One number: "1,234" and "1 234" (thousands), "3/4", "2 1/2" (mixed), "\frac{1}{2}",
# "0.\overline{3}" / "0.(3)" (repeating), ".4", with an optional trailing percent sign.
_NUMBER = re.compile(
    r"(?<![\^_])(?<![\^_]\{)"  # an exponent or an index is not a number of its own: "m^{2}"
    r"(?:(?<![\w)}\]])-|(?<![\d.a-zA-Z]))"
    r"(?:(?:\d+\s*)?\\[dt]?frac\s*\{\d+\}\s*\{\d+\}"  # "2\frac{1}{2}" is one mixed number
    r"|\d+ \d+/\d+(?![\d/])"
    r"|(?:\d{1,3}(?:(?:,|\{,\}|\\,|,\\!| )\d{3})+(?!\d)|\d+|(?=\.\d))"
    r"(?:\.\d*(?:\\overline\s*\{\d+\}|\(\d+\))|\.\d+)?(?:/\d+)?(?:[eE][+-]?\d+(?![\w.]))?)"
    r"(?:\s*\\?%)?"
)
# Between two numbers (or letters), only spaces and list separators: "2, 3, 5 or 19" is a
# hedge, not an answer.
# A hedge adverb may stand in the gap too: "(B) or maybe (C)", "19, perhaps 20".
_LIST_GAP = re.compile(
    r"[ \t]*(?:[,;/][ \t]*)?(?:(?:or|and)[ \t]+)?"
    r"(?:(?:maybe|perhaps|possibly|probably|even)[ \t]+)?"
)
_CHOICE_MENTION = re.compile(
    r"\(([A-J])\)|(?<![\w(\\])([A-J])\)|(?:option|choice|answer)\s+([A-J])\b"
    r"|(?<![\w(\\])([A-J])(?=\s*[.,;!]?\s*$|\s*[,;/]|\s+(?:or|and)\b)"
)

# "(B), not (C)": a choice named only to be rejected is not a mention.
_REJECTED = re.compile(r"\b(?:not|rather than|instead of)\s*$", re.IGNORECASE)
# A reply that opens with its choice, "B) ..." or "A. Because ...".
_LEADING_CHOICE = re.compile(r"\s*\(?([A-J])(?:\)|\.(?=\s|$)|:)")
# The only capital letter standing alone in a reply ("Because B is valid"); "I" and "A",
# which are also words, do not count.
_LONE_LETTER = re.compile(r"(?<![^\s(])([B-HJ])(?=[\s.,;!)]|$)")
_WRAPPED_LETTER = re.compile(r"\\(?:textbf|text|mathrm|mathbf|mbox)\s*\{\s*\(?([A-J])\)?\s*\}")


def _box_spans(text: str) -> list[tuple[int, int, str | None]]:
    """(start, end, content) of every box, braced or not, in order of opening; content None if
    unclosed."""
    found = {span[0]: span for span in _braced_spans(text)}
    if "box" in text:
        for match in _BRACELESS_BOX.finditer(text):
            found.setdefault(match.start(), (match.start(), match.end(), match["v"].rstrip(".,;:")))
    return [found[start] for start in sorted(found)]


def _braced_spans(text: str) -> list[tuple[int, int, str | None]]:
    """(start, end, content) of every `\\boxed{`/`\\fbox{`, in order of opening; content None if unclosed.

    One pass with a stack of open boxes, so that a reply of thousands of "\\boxed{" stays
    linear. A backslash escapes the next character, so `\\{` and `\\}` do not count.
    """
    opens = {match.end() - 1: match.start() for match in _BOX_OPEN.finditer(text)}
    if not opens:
        return []
    found: dict[int, tuple[int, int, str | None]] = {}
    stack: list[tuple[int, int, int]] = []  # (box start, its "{", depth inside), innermost last
    depth, i = 0, min(opens)
    while i < len(text):
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char == "{":
            depth += 1
            if i in opens:
                stack.append((opens[i], i, depth))
        elif char == "}":
            if stack and stack[-1][2] == depth:
                start, brace, _ = stack.pop()
                found[start] = (start, i + 1, text[brace + 1 : i].strip())
            depth -= 1
        i += 1
    for start, brace, _ in stack:
        found[start] = (start, len(text), None)
    return [found[start] for start in sorted(found)]


def extract_boxed(text: str) -> str | None:
    """The last box's content (joined with the boxes listed with it); "" if empty/unclosed.

    None when there is no box. Braces are matched by depth and a backslash escapes the next
    character, so `\\boxed{\\{1, 2\\}}` gives `\\{1, 2\\}`. A box in a restated question ("is
    it \\boxed{42}?") is not an answer.
    """
    if "box" not in text:
        return None
    text = without_question_sentences(text)
    spans = _box_spans(text)
    if not spans:
        return None
    if not spans[-1][2]:
        return ""
    first = len(spans) - 1
    while first > 0 and spans[first - 1][2] and spans[first - 1][1] <= spans[first][0]:
        if _box_link(text[spans[first - 1][1] : spans[first][0]]) is None:
            break
        first -= 1
    parts = [spans[k][2] for k in range(first, len(spans))]
    gaps = [text[spans[k][1] : spans[k + 1][0]] for k in range(first, len(spans) - 1)]
    joined = parts[0]
    for gap, part in zip(gaps, parts[1:]):
        joined += _box_link(gap) + part
    return joined if len(set(parts)) > 1 else parts[0]


def _box_link(gap: str) -> str | None:
    """How two boxes with `gap` between them join: ", " (parts of one answer), " or " (a
    hedge), or None (separate statements: the later box is a revision and counts alone)."""
    if _BOX_GAP.fullmatch(gap):
        return " or " if _OR_GAP.search(gap) else ", "
    if _SENTENCE_END.search(gap) or _REVISION.search(gap) or len(gap) > 80:
        return None
    if _HEDGE.search(gap):
        return " or "
    words = _PROSE_WORD.findall(re.sub(r"\\[a-zA-Z]+", " ", gap))
    return ", " if len(words) <= _LABEL_WORDS and not re.search(r"\d", gap) else None


def extract_answer_tag(text: str) -> str | None:
    """Return the stripped content of the last `<answer>...</answer>` outside the reasoning
    (`<think>...</think>`), None if there is none, "" if it is empty or the last one is unclosed:
    an empty or truncated answer block is a committed answer that failed, not a missing one."""
    if "<think>" in text:
        text = _THINK_BLOCK.sub(" ", text)
    matches = list(_ANSWER_TAG.finditer(text))
    last_open = None
    for last_open in _ANSWER_OPEN.finditer(text):
        pass
    if last_open is not None and (not matches or last_open.start() >= matches[-1].end()):
        return ""  # "<answer>42": cut off inside the answer, no number after it is read
    return matches[-1][1].strip() if matches else None


def extract_answer_phrase(text: str) -> str | None:
    """Return what follows the last "answer is" / "final answer:", up to a reason, or None.

    GSM8K's "#### 72" counts as a phrase too, and so, when there is no phrase, does a final
    line that is all bold ("**Yes**"; not a heading that ends in ":").
    """
    if "####" in text:
        return text.rsplit("####", 1)[1].strip().split("\n")[0].strip() or None
    last = None
    for last in _ANSWER_PHRASE.finditer(text):
        pass
    if last is None:
        bold = _BOLD_LINE.search(text[-300:]) if ("**" in text or "__" in text) else None
        answer = bold["answer"].strip() if bold else ""
        return answer if answer and not answer.endswith(":") else None
    return phrase_value(text, last)


def phrase_value(text: str, phrase: re.Match) -> str | None:
    """The answer one `ANSWER_PHRASE` match in `text` states, up to a reason, or None."""
    answer = _display_after(text, phrase)
    if "$" not in answer and "\\(" not in answer:
        # in prose "the answer is 46!" exclaims; a factorial would be written in maths
        answer = _REASON.sub("", answer).rstrip().rstrip("!")
    answer = answer.strip().strip("*").strip()
    return _refine(answer) if answer else None


def _display_after(text: str, phrase: re.Match) -> str:
    """The phrase's answer; when that is only the opening of display maths on its own lines
    ("Final answer:\\n\\n$$\\n15\\n$$"), the display's content."""
    answer = phrase["answer"].strip()
    closing = {"$$": "$$", "\\[": "\\]"}.get(answer)
    if closing is None:
        return phrase["answer"]
    start = phrase.start("answer") + len(answer)
    end = text.find(closing, start)
    return text[start:end].strip() if 0 < end - start <= 400 else phrase["answer"]


def _refine(answer: str) -> str:
    """The answer inside a phrase's sentence: "The volume of $ABC$ is 120" states 120."""
    if len(_PROSE_WORD.findall(answer)) < 3 or extract_whole(answer) is not None:
        return answer
    inner = extract_answer_phrase(answer) if _ANSWER_PHRASE.search(answer) else None
    return inner or extract_math_span(answer) or extract_last_number(answer) or answer


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
    text = without_questions(text)
    return _last_run([m for m in _NUMBER.finditer(text) if m[0]], text)


def extract_last_choice(text: str) -> str | None:
    """Return the last multiple-choice mention ("(B)", "B)", "option B", a final "B"), or None.

    A letter closing a list ("A, B, C or D") returns the list, which then fails as a hedge.
    """
    text = _WRAPPED_LETTER.sub(r"\1", without_questions(text)).replace("$", " ")  # "$E$"
    if leading := _LEADING_CHOICE.match(text):
        return leading[0].strip()  # "A. Because B is not valid": the reply opens with its choice
    mentions = [
        m for m in _CHOICE_MENTION.finditer(text)
        if not _REJECTED.search(text, max(0, m.start() - 20), m.start())
    ]
    found = _last_run(mentions, text)
    if found is None:
        letters = set(_LONE_LETTER.findall(text))
        found = letters.pop() if len(letters) == 1 else None
    return found


def _phrase_after_last_box(text: str) -> bool:
    """True when a "final answer: ..." follows the last box (the boxes were steps)."""
    if "box" not in text or "nswer" not in text:
        return False
    spans = _box_spans(text)
    last = None
    for last in _ANSWER_PHRASE.finditer(text):
        pass
    if not spans or last is None or last.start() < spans[-1][1]:
        return False
    return re.search(r"[\d$\\]", last["answer"]) is not None  # not "the answer is right"


# A reply whose last words say it could not finish commits to nothing it wrote before.
_GAVE_UP = re.compile(
    r"\b(?:not sure (?:how to (?:continue|proceed|finish|solve)|what (?:the (?:question|problem)|"
    r"it|they) (?:wants|asks|is asking|means)|what to do next)|(?:don't|do not|can't|cannot) "
    r"(?:know how to|figure out|solve|finish|continue)|i(?:'m| am) stuck|unable to (?:solve|finish))",
    re.IGNORECASE,
)
# The extractors that read an answer out of prose; a box, a tag or a phrase is a commitment.
_PROSE_METHODS = ("whole", "math_span", "last_number")


def gave_up(text: str) -> bool:
    """True when the reply ends (its last 300 characters) saying it cannot finish ("I'm stuck")."""
    return _GAVE_UP.search(text[-300:]) is not None


EXTRACTORS: dict[str, Callable[[str], str | None]] = {
    "boxed": extract_boxed,
    "answer_tag": extract_answer_tag,
    "answer_phrase": extract_answer_phrase,
    "whole": extract_whole,
    "math_span": extract_math_span,
    "last_number": extract_last_number,
}
DEFAULT_EXTRACT = ("boxed", "answer_tag", "answer_phrase", "whole", "math_span", "last_number")


def extract_answer(
    text: str, methods: tuple[str, ...], choice: bool = False
) -> tuple[str, str] | None:
    """Try the extractors named in `methods`, in order; the first that finds something wins.

    Returns `(method, answer)`, or None when no method finds anything. A later method is
    never consulted once an earlier one succeeds, even if its answer would be correct; an
    empty or unclosed last box also stops the search, with None. With `choice` (the gold is
    a letter), "last_number" is replaced by `extract_last_choice`.
    """
    if "boxed" in methods and "answer_phrase" in methods and _phrase_after_last_box(text):
        methods = ("answer_phrase",) + tuple(m for m in methods if m != "answer_phrase")
    if gave_up(text):
        methods = tuple(m for m in methods if m not in _PROSE_METHODS)
    for method in methods:
        if choice and method in ("whole", "math_span"):
            continue  # a letter gold: its letter is found by extract_last_choice
        if choice and method == "last_number":
            answer = extract_last_choice(text)
        else:
            answer = EXTRACTORS[method](text)
        if answer == "":  # an empty box or answer block: a failed answer, not a missing one
            return None
        if answer is not None:
            return method, answer
    return None

# For math/commitments.py, which reads every commitment where the extractors read the last one.
ANSWER_PHRASE, box_spans, box_link = _ANSWER_PHRASE, _box_spans, _box_link
