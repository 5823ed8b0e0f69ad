"""Rewards as the judge under test of `rlvr eval-judge`: a reward function, a recipe's rubric,
a recipe's rules, or a recipe's [reward.judge] (a GenRM judge, asked like `--judge model:`).

A reward scores one response against the row's gold answer (`gold`, else `reference`, else
""): a pointwise row's P(yes) is that score. A pair is scored response by response and the
two scores are compared (judge_bench.RewardJudge), so a reward has no position to prefer.

The builders are the training run's own (`rlvr.orchestrate.model_rewards`), so a rubric or a
rules set is benchmarked exactly as [reward] would score rollouts; a plain function goes
through `rlvr.rewards.calling` like `reward.function`, and never imports torch (a rubric or
rules set does, even with program criteria only: the `rlvr.orchestrate` package imports it).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from pathlib import Path

from rlvr.errors import ConfigError, RewardError
from rlvr.evaluate.judge_bench import RewardJudge
from rlvr.function_spec import import_function


def reward_judge(fn: Callable, name: str) -> RewardJudge:
    """`fn` (response, gold) -> Verdict | float (with prompt= when it sets needs_prompt) as a judge."""
    from rlvr.rewards.calling import call_reward, score_of

    def score(prompt: str, response: str, gold: str) -> float:
        try:
            out = call_reward(fn, response, gold, prompt)
        except Exception as e:  # user code or a judge model: the row is added by the caller
            raise RewardError(f"reward {name} raised {type(e).__name__}: {e}") from None
        if isinstance(out, bool) or not hasattr(out, "score") and not isinstance(out, (int, float)):
            raise RewardError(f"reward {name} returned {type(out).__name__}, expected a float or Verdict")
        value = score_of(out)
        if not math.isfinite(value) or not 0.0 <= value <= 1.0:
            raise RewardError(f"reward {name} returned {value!r}, not a score in [0, 1]")
        return value

    return RewardJudge(score, name)


def function_reward_judge(spec: str) -> RewardJudge:
    """`--judge reward:package.module:function`."""
    fn = import_function(spec, f"--judge reward:{spec}", "reward:package.module:function")
    return reward_judge(fn, spec)


def recipe_reward(recipe: str | Path, judge: Callable | None = None):
    """The [reward] section of a recipe, its [reward.judge] replaced by `judge(section.judge)`
    when given (the command's --judge-* flags)."""
    from rlvr.config.load import load_config

    section = load_config(recipe).reward
    if judge is not None:
        section = section.model_copy(update={"judge": judge(section.judge)})
    return section


def with_top(genrm, top: int):
    """The GenRM judge reading `top` next tokens for its verdict (--judge-top)."""
    return dataclasses.replace(genrm, top=top)


def rubric_judge(recipe: str | Path, top: int = 20, judge: Callable | None = None) -> RewardJudge:
    """`--judge rubric:RECIPE.toml`: the weighted score of the recipe's [[reward.rubric]]."""
    from rlvr.orchestrate import model_rewards
    from rlvr.rewards.rubric import JudgeCriterion, RubricReward

    section = recipe_reward(recipe, judge)
    if not section.rubric:
        raise ConfigError(f"--judge rubric:{recipe}: the recipe has no [[reward.rubric]] criteria")
    try:
        built = model_rewards.build_rubric(section)
    except ConfigError as e:
        raise ConfigError(f"--judge rubric:{recipe}: {e}") from None
    criteria = [(name, dataclasses.replace(c, judge=with_top(c.judge, top)) if isinstance(c, JudgeCriterion) else c, w)
                for name, c, w in built.criteria]
    return reward_judge(RubricReward(criteria), f"rubric:{recipe}")


def rules_judge(recipe: str | Path, top: int = 20, judge: Callable | None = None) -> RewardJudge:
    """`--judge rules:RECIPE.toml`: the mean of the judge's P(yes) over the recipe's reward.rules."""
    from rlvr.orchestrate import model_rewards
    from rlvr.rewards.rules import RulesReward

    section = recipe_reward(recipe, judge)
    if not section.rules:
        raise ConfigError(f"--judge rules:{recipe}: the recipe has no reward.rules")
    try:
        built = model_rewards.MODEL_REWARDS["rules"](section)
    except ConfigError as e:
        raise ConfigError(f"--judge rules:{recipe}: {e}") from None
    return reward_judge(RulesReward(with_top(built.judge, top), built.rules), f"rules:{recipe}")


def recipe_genrm(recipe: str | Path, top: int = 20, judge: Callable | None = None):
    """`--recipe RECIPE.toml`: the recipe's [reward.judge] as an Ask (judge_bench)."""
    from rlvr.orchestrate import model_rewards

    section = recipe_reward(recipe, judge)
    try:
        genrm = with_top(model_rewards.build_judge(section.judge), top)
    except ConfigError as e:
        raise ConfigError(f"--recipe {recipe}: {e}") from None
    return lambda prompt, response, question, reference: genrm.ask(prompt, response, question, reference).score
