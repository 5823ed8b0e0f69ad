"""Hand-made prompt groups for the evaluate tests."""

from __future__ import annotations

from rlvr.evaluate.groups import Graded, PromptGroup
from rlvr.evaluate.vote import answer_key


def group(prompt: str, gold: str, answers: list[str | None], logprobs: list[float] | None = None) -> PromptGroup:
    """A group whose samples answered `answers` (None: no answer); correct iff answer == gold."""
    logprobs = logprobs or [None] * len(answers)
    members = tuple(Graded(response=str(a), score=float(a == gold), answer=a, key=answer_key(a), mean_logprob=lp)
                    for a, lp in zip(answers, logprobs))
    return PromptGroup(prompt=prompt, gold=gold, source=f"test:{prompt}", members=members)
