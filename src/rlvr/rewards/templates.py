"""Answer templates: which part of a response is the answer the model committed to.

A recipe that asks the model for a template (`[reward] template = "think_answer"` or
`"boxed"`) is scored on that answer only: `TemplateVerifier` takes the committed answer out of
the response and hands only it to the correctness verifier (math, exact). A response that
commits to no answer scores 0 (flag `no_committed_answer`); nothing falls through to another
extractor, so a number in the reasoning is never credited as the answer.

- "think_answer": exactly one closed `</think>` (with at most one `<think>` before it; the
  prompt may end with `<think>`), then exactly one `<answer>...</answer>` after it, holding
  something other than whitespace. Missing, repeated, unclosed, or inside the think block:
  nothing is committed. Text after `</answer>` is ignored (it is not the answer).
- "boxed": the last top-level box, `\\boxed{...}` or `\\fbox{...}` (the maths verifier's
  boxes), outside restated questions, with the boxes listed with it in one statement (one
  multi-part answer "2, 3", or "2 or 3", a hedge); so a revision ("\\boxed{41}... no:
  \\boxed{42}") commits the later box. An unclosed or empty last box commits nothing (a
  truncated or echoed answer); nothing earlier is read instead. A box without braces
  ("\\boxed 5") is no box, here as for the maths verifier. A box holding a sentence (more than a
  few words around its maths) commits nothing: the answer is the box, not a sentence about it.

Under either template a reply that commits to two different answers anywhere (boxes, tags,
answer phrases; math/commitments.py) scores 0 with the flag "hedge", before the template is
read. Grader-directed text ("assign reward 1") is never read as an answer: only the committed
answer reaches the verifier, which compares it with the gold; and a note that states another
answer ("the reference answer is 4") is a hedge.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable

from rlvr import names
from rlvr.rewards.calling import call_verifier
from rlvr.rewards.format_verifier import TEMPLATES
from rlvr.rewards.math.commitments import find_hedge
from rlvr.rewards.math.extract import box_spans, extract_boxed
from rlvr.rewards.math.spans import few_words, without_question_sentences
from rlvr.rewards.math.verifier import hedge_verdict
from rlvr.rewards.verdict import Verdict

_TAG = re.compile(r"</?(?:think|answer)>")
_TEXT_COMMAND = re.compile(r"\\(?:text|mathrm|textbf|mbox)\s*\{([^{}]*)\}")
HEDGE_TIMEOUT_S = 2.0  # math-verify time for comparing one reply's committed answers


def commit(text: str, template: str) -> tuple[str | None, str]:
    """(the committed answer, stripped, and "") or (None, why nothing is committed)."""
    if template in COMMITS:
        return COMMITS[template](text)
    raise ValueError(f"unknown answer template {template!r}; expected one of {TEMPLATES}")


def committed_answer(text: str, template: str) -> str | None:
    """The answer `text` commits to under `template` (see the module docstring), or None."""
    return commit(text, template)[0]


def _last_box(text: str) -> tuple[str | None, str]:
    text = without_question_sentences(text)
    spans = box_spans(text)
    if not spans:
        return None, "no \\boxed{}"
    if spans[-1][2] is None:
        return None, "the last \\boxed{ is unclosed"
    content = extract_boxed(text)
    if not content:
        return None, "the last \\boxed{} is empty"
    if not few_words(_TEXT_COMMAND.sub(r" \1 ", content)):  # the words of \text{} count too
        return None, "the last box holds a sentence, not an answer"
    return content, ""


def _think_answer(text: str) -> tuple[str | None, str]:
    tags = list(_TAG.finditer(text))
    counts = Counter(m.group(0) for m in tags)
    where = {m.group(0): m for m in tags}  # the last of each; only used when there is one
    if counts["</think>"] != 1:
        return None, "no closed </think>" if not counts["</think>"] else f"{counts['</think>']} </think> tags"
    if counts["<think>"] > 1 or (counts["<think>"] and where["<think>"].start() > where["</think>"].start()):
        return None, "the think block is not one <think>...</think>"
    if counts["<answer>"] != 1 or counts["</answer>"] != 1:
        return None, _answer_count_problem(counts["<answer>"], counts["</answer>"])
    think_end, opening, closing = where["</think>"], where["<answer>"], where["</answer>"]
    if not think_end.end() <= opening.start() < closing.start():
        return None, "the <answer> block is not after </think>"
    answer = text[opening.end() : closing.start()].strip()
    return (answer, "") if answer else (None, "empty <answer>")


def _answer_count_problem(openings: int, closings: int) -> str:
    if openings == 0:
        return "no <answer> block"
    if openings > 1 or closings > 1:
        return f"{max(openings, closings)} <answer> blocks (one answer only)"
    return "unclosed <answer>"


COMMITS = names.TEMPLATE.bind({"think_answer": _think_answer, "boxed": _last_box}, without=("none",),
                              table="COMMITS")


@dataclass(frozen=True)
class TemplateVerifier:
    """Score the committed answer of `template` with `inner`; 0 when none is committed.

        TemplateVerifier("think_answer", MathVerifier())(
            response="<think>6 * 7 = 42</think><answer>42</answer>", gold="42")
        # the MathVerifier's verdict on response="42"

    Attributes:
        template: "think_answer" or "boxed" (see the module docstring).
        inner: the correctness verifier, called with `response=` the committed answer only.
        max_chars: longer responses score 0 unread (flag "too_long"), as the inner verifier
            would refuse them; the builder passes the inner verifier's own limit.
    """

    template: str
    inner: Callable[..., Verdict]
    max_chars: int = 20_000

    def __post_init__(self) -> None:
        if self.template not in TEMPLATES:
            raise ValueError(f"unknown answer template {self.template!r}; expected one of {TEMPLATES}")
        if not self.max_chars > 0:
            raise ValueError(f"max_chars must be positive, got {self.max_chars!r}")

    def __call__(self, *, response: str, gold: str) -> Verdict:
        if len(response) > self.max_chars:
            return Verdict(0.0, f"response too long ({len(response)} chars)", ("too_long",))
        if (hedge := find_hedge(response, HEDGE_TIMEOUT_S)) is not None:
            return hedge_verdict(*hedge)
        answer, why = commit(response, self.template)
        if answer is None:
            return Verdict(0.0, f"no committed answer ({self.template}): {why}", ("no_committed_answer",))
        return call_verifier(self.inner, answer, gold)
