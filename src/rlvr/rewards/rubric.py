"""Rubric rewards: named, weighted criteria, each scored by a program or by the judge.

    reward = sum_i w_i * score_i / sum_i w_i

A criterion is a program (an importable function or a built-in verifier, called
`(response, gold)`) or a question put to the GenRM judge (its P(yes), see judge/genrm.py).
Every criterion gets the task's gold string; a judge criterion shows it to the judge as the
reference when it is non-empty. The result is a `CompositeVerdict` whose `components` keep each
criterion's score (they reach the step metrics as `reward/component/<name>`). The weighting is
`compose.Composite`'s, with its rule that format terms together must weigh less than the
correctness part (the first criterion): a rubric cannot let format outvote correctness.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rlvr.errors import RewardError
from rlvr.rewards.calling import call_verifier
from rlvr.rewards.compose import Composite, CompositeVerdict
from rlvr.rewards.judge.genrm import GenRMJudge
from rlvr.rewards.verdict import Verdict


@dataclass(frozen=True)
class ProgramCriterion:
    """A function or verifier; a float it returns becomes a Verdict (checked to lie in [0, 1])."""

    fn: Callable[[str, str], Verdict | float]
    name: str

    def __call__(self, response: str, gold: str) -> Verdict:
        out = call_verifier(self.fn, response, gold)  # built-in verifiers take keywords only
        if isinstance(out, Verdict):
            return out
        if isinstance(out, bool) or not isinstance(out, (int, float)) or not math.isfinite(out) \
                or not 0.0 <= out <= 1.0:
            raise RewardError(f"rubric criterion {self.name!r} returned {out!r}, expected a Verdict "
                              f"or a number in [0, 1]")
        return Verdict(float(out), "")


@dataclass(frozen=True)
class JudgeCriterion:
    """The judge's P(yes) to `question` about the response."""

    judge: GenRMJudge
    question: str

    def ask(self, response: str, gold: str, prompt: str) -> Verdict:
        return self.judge.ask(prompt, response, self.question, gold)


class RubricReward:
    """`reward.verifier = "rubric"`. `criteria` are (name, criterion, weight) triples."""

    needs_prompt = True  # judge criteria read the prompt (orchestrate/scoring.py)

    def __init__(self, criteria: Sequence[tuple[str, ProgramCriterion | JudgeCriterion, float]]):
        self.criteria = tuple(criteria)
        Composite(self.criteria)  # checks names, weights and the format rule once, up front

    def __call__(self, response: str, gold: str, *, prompt: str | None = None) -> CompositeVerdict:
        parts = [(name, self._bound(c, prompt), w) for name, c, w in self.criteria]
        return Composite(parts)(response=response, gold=gold)

    @staticmethod
    def _bound(criterion: ProgramCriterion | JudgeCriterion, prompt: str | None):
        if not isinstance(criterion, JudgeCriterion):
            return criterion
        if prompt is None:
            raise RewardError("a rubric with judge criteria needs the prompt; this caller passed none")
        return lambda response, gold: criterion.ask(response, gold, prompt)
