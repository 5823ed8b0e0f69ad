"""Reward for answer format: `\\boxed{...}` or `<think>...</think><answer>...</answer>`.

Format is a gate or a small term, never a bonus that can outvote correctness (see
docs/DESIGN.md, "Reward is a stack"); this verifier only says whether the template was
followed, and why not. It ignores `gold`.

Rules (both templates): every tag or box must be closed, hold something other than
whitespace, and hold more than a placeholder ("...", "answer", "your answer", ...: the
template echoed with nothing in it); each tag appears at most once.
Which part is the answer a correctness verifier reads: `templates.py`.

- "boxed", loose: closed, non-empty `\\boxed{...}`, all holding the same answer (up to
  whitespace): the same answer boxed twice is fine, two different answers are a hedge; and
  reasoning outside the boxes (a letter or digit other than math delimiters, and not a
  placeholder such as "Answer:"), so a bare `\\boxed{5}` fails.
  "boxed", strict: also nothing after the last box but closing punctuation (`.`, `$`, `\\]`, `)`).
- "think_answer", loose: one `<answer>...</answer>`; a `<think>` block before it is optional,
  and a lone `</think>` is fine (the prompt may end with `<think>`); other text is allowed.
  "think_answer", strict: exactly `<think>R</think><answer>A</answer>` with non-empty R and A
  and nothing but whitespace around or between them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rlvr import names
from rlvr.rewards.verdict import Verdict

PLACEHOLDERS = frozenset(
    {
        "...",
        "…",
        "answer",
        "your answer",
        "final answer",
        "your final answer",
        "answer here",
        "<answer>",
        "[answer]",
        "{answer}",
        "reasoning",
        "your reasoning",
        "thinking",
        "<think>",
    }
)
_BOX_OPEN = re.compile(r"\\boxed\s*\{")
_TAG = re.compile(r"<(/?)(think|answer)>")
_CLOSING_PUNCTUATION = re.compile(r"[\s.$)\\\]]*")
_MATH_DELIMITERS = re.compile(r"\$|\\[\[\]()]")


def _fail(reason: str, flag: str) -> Verdict:
    return Verdict(0.0, reason, (flag,))


def _content_problem(content: str, what: str) -> Verdict | None:
    """Empty or placeholder content fails; anything else is the model's own."""
    text = content.strip()
    if not text:
        return _fail(f"empty {what}", "empty")
    if text.lower().strip(" .:") in PLACEHOLDERS or text.lower() in PLACEHOLDERS:
        return _fail(f"template echoed: {what} holds only {text[:20]!r}", "echoed")
    return None


def find_boxes(text: str) -> list[tuple[int, int | None, str]]:
    """Top-level `\\boxed{...}`: (start, end after the closing brace or None if unclosed, content).

    Braces are matched by depth; a backslash escapes the next character. A box inside an
    earlier box is part of that box's content, not a box of its own.
    """
    boxes: list[tuple[int, int | None, str]] = []
    for match in _BOX_OPEN.finditer(text):
        if boxes and (boxes[-1][1] is None or match.start() < boxes[-1][1]):
            continue
        depth, i = 1, match.end()
        while i < len(text) and depth:
            if text[i] == "\\":
                i += 2
                continue
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        end = i if depth == 0 else None
        boxes.append(
            (match.start(), end, text[match.end() : i - 1] if end else text[match.end() :])
        )
    return boxes


def _outside_boxes(text: str, boxes: list[tuple[int, int | None, str]]) -> str:
    """The text between and around the boxes (all closed), math delimiters blanked."""
    starts = [start for start, _, _ in boxes] + [len(text)]
    ends = [0] + [end for _, end, _ in boxes]
    return _MATH_DELIMITERS.sub(" ", " ".join(text[a:b] for a, b in zip(ends, starts)))


def check_boxed(text: str, strict: bool) -> Verdict:
    boxes = find_boxes(text)
    if not boxes:
        return _fail("no \\boxed{}", "missing")
    if any(end is None for _, end, _ in boxes):
        return _fail("unclosed \\boxed{", "unclosed")
    for _, _, content in boxes:
        problem = _content_problem(content, "\\boxed{}")
        if problem:
            return problem
    answers = {" ".join(content.split()) for _, _, content in boxes}
    if len(answers) > 1:
        return _fail(f"{len(answers)} different \\boxed{{}} answers (one answer only)", "repeated")
    reasoning = _outside_boxes(text, boxes)
    if not re.search(r"[^\W_]", reasoning):
        return _fail("no reasoning outside \\boxed{}", "no_reasoning")
    problem = _content_problem(reasoning, "the reasoning outside \\boxed{}")
    if problem:
        return problem
    if strict and not _CLOSING_PUNCTUATION.fullmatch(text[boxes[-1][1] :]):
        return _fail("text after \\boxed{}", "extra_text")
    return Verdict(1.0, f"format ok (boxed, {'strict' if strict else 'loose'})")


def _tag_sequence_problem(tags: list[re.Match], strict: bool) -> Verdict | None:
    """Counts and order of the tags: each at most once, closed, and in template order."""
    names = [m.group(0) for m in tags]
    for tag in ("<think>", "</think>", "<answer>", "</answer>"):
        if names.count(tag) > 1:
            return _fail(f"{names.count(tag)} {tag} tags", "repeated")
    if "<answer>" not in names:
        return _fail("no <answer> tag", "missing")
    for opening, closing in (("<think>", "</think>"), ("<answer>", "</answer>")):
        if opening in names and closing not in names:
            return _fail(f"unclosed {opening}", "unclosed")
    allowed = [["<think>", "</think>", "<answer>", "</answer>"]]
    if not strict:
        allowed += [["</think>", "<answer>", "</answer>"], ["<answer>", "</answer>"]]
    if names not in allowed:
        return _fail("tags out of template order: " + "".join(names), "order")
    return None


def check_think_answer(text: str, strict: bool) -> Verdict:
    tags = list(_TAG.finditer(text))
    problem = _tag_sequence_problem(tags, strict)
    if problem:
        return problem
    spans = {m.group(0): m for m in tags}
    answer = text[spans["<answer>"].end() : spans["</answer>"].start()]
    problem = _content_problem(answer, "<answer>")
    if problem is None and strict:
        reasoning = text[spans["<think>"].end() : spans["</think>"].start()]
        problem = _content_problem(reasoning, "<think>")
        outside = (
            text[: tags[0].start()] + text[spans["</think>"].end() : spans["<answer>"].start()]
        )
        if problem is None and (outside + text[spans["</answer>"].end() :]).strip():
            problem = _fail("text outside the <think> and <answer> blocks", "extra_text")
    return problem or Verdict(1.0, f"format ok (think_answer, {'strict' if strict else 'loose'})")


FORMAT_CHECKS = names.TEMPLATE.bind({"boxed": check_boxed, "think_answer": check_think_answer},
                                    without=("none",), table="FORMAT_CHECKS")
TEMPLATES = tuple(FORMAT_CHECKS)  # the templates a response can follow ("none" is no template)


@dataclass(frozen=True)
class FormatVerifier:
    """Score 1 if the response follows `template` (see the module docstring), else 0.

    Attributes:
        template: "boxed" or "think_answer".
        strict: the strict variant of the template's rules.
        max_chars: longer responses score 0 without being read.
    """

    template: str = "think_answer"
    strict: bool = False
    max_chars: int = 100_000

    def __post_init__(self) -> None:
        if self.template not in TEMPLATES:
            raise ValueError(
                f"unknown format template {self.template!r}; expected one of {TEMPLATES}"
            )
        if not self.max_chars > 0:
            raise ValueError(f"max_chars must be positive, got {self.max_chars!r}")

    def __call__(self, *, response: str, gold: str = "") -> Verdict:
        """Check `response` against the template; `gold` is not used."""
        if len(response) > self.max_chars:
            return _fail(f"response too long ({len(response)} chars)", "too_long")
        return FORMAT_CHECKS[self.template](response, self.strict)
