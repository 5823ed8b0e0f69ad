"""Build the rewards that need a model from [reward]: judge, rubric, rules, probability.

`build_reward_fn` (scoring.py) calls `MODEL_REWARDS[section.verifier](section, policy)`;
`policy` is the trainer's (model, tokenizer), used only by the probability reward.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rlvr import names
from rlvr.config.schema import JudgeSection, RewardSection, RubricCriterion
from rlvr.errors import ConfigError
from rlvr.function_spec import import_function
from rlvr.rewards.judge import (
    GenRMJudge,
    HttpJudgeBackend,
    JudgeBackend,
    JudgeReward,
    ReasonParams,
)
from rlvr.rewards.probability import ProbabilityReward
from rlvr.rewards.rubric import JudgeCriterion, ProgramCriterion, RubricReward
from rlvr.rewards.rules import RulesReward


def judge_backend(j: JudgeSection) -> JudgeBackend:
    if j.backend == "http":
        return HttpJudgeBackend(j.url, j.model, timeout_s=j.timeout_s)
    if not j.model:
        raise ConfigError("reward.judge.model: the transformers judge needs a model folder")
    from rlvr.engines.loading import load_model, load_tokenizer
    from rlvr.orchestrate.judge_backend import TransformersJudgeBackend

    return TransformersJudgeBackend(load_model(Path(j.model)), load_tokenizer(Path(j.model)))


def build_judge(j: JudgeSection) -> GenRMJudge:
    params = ReasonParams(max_new_tokens=j.max_new_tokens, temperature=j.temperature)
    return GenRMJudge(judge_backend(j), samples=j.samples, params=params)


def criterion(c: RubricCriterion, section: RewardSection, judge: Callable[[], GenRMJudge]):
    from rlvr.rewards.build import build_verifier

    if c.question is not None:
        return JudgeCriterion(judge(), c.question)
    if c.function is not None:
        return ProgramCriterion(import_function(c.function, f"reward.function = {c.function!r}"), c.name)
    return ProgramCriterion(build_verifier(c.verifier, section), c.name)  # the section's template too


def build_rubric(section: RewardSection, policy=None) -> RubricReward:
    made: list[GenRMJudge] = []

    def judge() -> GenRMJudge:  # one judge model shared by every question, loaded only if asked
        if not made:
            made.append(build_judge(section.judge))
        return made[0]

    criteria = [(c.name, criterion(c, section, judge), c.weight) for c in section.rubric]
    try:
        return RubricReward(criteria)
    except ValueError as e:
        raise ConfigError(f"reward.rubric: {e}") from None


def build_probability(section: RewardSection, policy=None) -> ProbabilityReward:
    if policy is None:
        raise ConfigError("reward.verifier = 'probability' scores with the policy being trained; "
                          "build_reward_fn was given no policy (model, tokenizer)")
    model, tokenizer = policy
    return ProbabilityReward(model, tokenizer)


MODEL_REWARDS: dict[str, Callable[[RewardSection, object], object]] = names.MODEL_VERIFIER.bind({
    "judge": lambda s, policy=None: JudgeReward(build_judge(s.judge)),
    "rubric": build_rubric,
    "rules": lambda s, policy=None: RulesReward(build_judge(s.judge), s.rules),
    "probability": build_probability,
}, table="MODEL_REWARDS")
