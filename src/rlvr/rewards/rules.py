"""Rule-based rewards: natural-language rules, each graded by the GenRM judge.

For rules R_1..R_m the judge is asked, for each rule, whether the response follows it:

    score_i = P(yes | "Does the response follow this rule: R_i?")   (judge/genrm.py)
    reward  = (1 / m) * sum_i score_i

Each rule's score is kept as component `rule_<i>` (1-based, in the order of `reward.rules`),
so the step metrics show `reward/component/rule_1`, ...; the verdict's reason quotes the rules.
The gold answer is shown to the judge as a reference when it is non-empty.
"""

from __future__ import annotations

from collections.abc import Sequence

from rlvr.errors import RewardError
from rlvr.rewards.compose import CompositeVerdict
from rlvr.rewards.judge.genrm import GenRMJudge


def rule_question(rule: str) -> str:
    return f"Does the response follow this rule: {rule}"


class RulesReward:
    needs_prompt = True  # called as fn(response, gold, prompt=...) (orchestrate/scoring.py)

    def __init__(self, judge: GenRMJudge, rules: Sequence[str]):
        if not rules or not all(isinstance(r, str) and r.strip() for r in rules):
            raise ValueError(f"rules must be a non-empty list of non-empty strings, got {list(rules)!r}")
        self.judge, self.rules = judge, tuple(rules)

    def __call__(self, response: str, gold: str, *, prompt: str | None = None) -> CompositeVerdict:
        if prompt is None:
            raise RewardError("the rules reward needs the prompt; this caller passed none")
        details, flags, notes = [], [], []
        for i, rule in enumerate(self.rules, start=1):
            verdict = self.judge.ask(prompt, response, rule_question(rule), gold)
            details.append((f"rule_{i}", verdict.score))
            flags.extend(f for f in verdict.flags if f not in flags)
            notes.append(f"rule_{i} {rule[:40]!r}: {verdict.score:.2f}")
        score = sum(s for _, s in details) / len(details)
        return CompositeVerdict(score, f"{score:.3g}: " + "; ".join(notes), tuple(flags), tuple(details))
