"""Reward for short non-numeric answers: extract the final answer, then compare it exactly.

For tasks whose gold answer is a word, a list, a sequence of moves or a small grid (most of
reasoning-gym's generators), where a maths checker does not apply and partial credit for a
substring would pay a reply that lists many candidates.

Extraction, first rule that applies (the last occurrence counts, as the model's final word):

1. `<answer>...</answer>`: the last closed tag outside `<think>...</think>`, in any case. An
   empty or unclosed last tag is no answer.
2. `\\boxed{...}` / `\\fbox{...}`: the last top-level box, outside restated questions, with the
   boxes listed with it in one statement (as the maths verifier reads boxes). An empty or
   unclosed last box is no answer, and no later rule runs (a stray line after `\\boxed{}` is
   not an answer).
3. The last non-blank line, with a leading "Answer:" / "Final answer:" label dropped.

A reply that commits to two different answers (boxes, tags, answer phrases) is a hedge and
scores 0 before any rule runs (`math/commitments.py`).

Normalisation, applied to the answer and the gold alike: surrounding whitespace stripped,
every run of whitespace (newlines included) made one space, a trailing full stop dropped,
and letters case-folded unless `case_sensitive`. Nothing else: "1,2" is not "1, 2" and "07"
is not "7" (use the math verifier for numbers). A multi-line gold (a grid) therefore matches
a reply only through a tag or a box, whose content keeps all its lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rlvr.rewards.math.extract import extract_answer_tag, extract_boxed
from rlvr.rewards.math.commitments import find_hedge
from rlvr.rewards.math.verifier import hedge_verdict
from rlvr.rewards.verdict import Verdict

HEDGE_TIMEOUT_S = 2.0  # math-verify time for comparing one reply's committed answers
_LABEL = re.compile(r"^\s*(?:final\s+answer|answer)\s*[:=]\s*", re.IGNORECASE)


def extract_final(response: str) -> tuple[str, str] | None:
    """(how it was found, the answer as written), or None when the reply gives no answer."""
    tag = extract_answer_tag(response)  # outside <think>; "" when empty or unclosed
    if tag is not None:
        return ("answer_tag", tag) if tag else None
    box = extract_boxed(response)  # the maths verifier's boxes: one statement's boxes joined
    if box is not None:
        return ("boxed", box) if box else None
    lines = [line for line in response.splitlines() if line.strip()]
    if not lines:
        return None
    answer = _LABEL.sub("", lines[-1])
    return ("last_line", answer) if answer.strip() else None


def normalize(text: str, case_sensitive: bool = False) -> str:
    """The comparison form of an answer (see the module docstring)."""
    text = " ".join(text.split())
    text = text[:-1].rstrip() if text.endswith(".") else text
    return text if case_sensitive else text.casefold()


@dataclass(frozen=True)
class ExactVerifier:
    """Score 1 when the extracted final answer equals the gold after normalisation, else 0.

        ExactVerifier()(response="I reversed it: <answer>olleh</answer>", gold="olleh")
        # Verdict(score=1.0, reason='correct (via answer_tag)', flags=())

    Attributes:
        case_sensitive: compare letters as written (default: case-folded).
        whole_response: the whole response is the answer, nothing is extracted (for an answer
            a template already took out: `templates.py`).
        max_chars: longer responses score 0 without being read (flag "too_long"), so a giant
            reply costs no more than a short one.
    """

    case_sensitive: bool = False
    whole_response: bool = False
    max_chars: int = 20_000

    def __post_init__(self) -> None:
        if not self.max_chars > 0:
            raise ValueError(f"max_chars must be positive, got {self.max_chars!r}")

    def __call__(self, *, response: str, gold: str) -> Verdict:
        """Check one response against its gold answer; see the class docstring."""
        if len(response) > self.max_chars:
            return Verdict(0.0, f"response too long ({len(response)} chars)", ("too_long",))
        if not self.whole_response and (hedge := find_hedge(response, HEDGE_TIMEOUT_S)) is not None:
            return hedge_verdict(*hedge)  # two different committed answers (math/commitments.py)
        found = ("template", response) if self.whole_response else extract_final(response)
        if found is None:
            return Verdict(0.0, "no answer found", ("no_answer",))
        how, answer = found
        got, expected = normalize(answer, self.case_sensitive), normalize(gold, self.case_sensitive)
        if got == expected:
            return Verdict(1.0, f"correct (via {how})")
        return Verdict(0.0, f"wrong: got {got[:80]!r}, expected {expected[:80]!r} (via {how})")
