"""The result of checking one completion against its gold answer."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Verdict:
    """What a verifier decided about one completion, and why.

    A verifier is any callable `(response: str, gold: str) -> Verdict`. The reward is `score`;
    `reason` is for people reading rollouts ("correct (via boxed)", "wrong: got 12, expected
    13", "no answer found", "timed out after 1.0 s", "empty completion", ...); `flags` are
    machine-countable tags ("timeout", "error", ...) so that a trainer can log how often each
    kind of failure happened without parsing `reason`.

    Attributes:
        score: the reward, in [0, 1].
        reason: a short human-readable explanation.
        flags: zero or more tags naming abnormal outcomes.
    """

    score: float
    reason: str
    flags: tuple[str, ...] = ()
