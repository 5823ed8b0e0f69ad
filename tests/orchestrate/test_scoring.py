"""A reward function that raises, returns NaN or a wrong type is reported, never swallowed."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from rlvr.errors import ConfigError, RewardError
from rlvr.orchestrate.scoring import import_function, score_groups
from rlvr.rewards import Verdict
from rlvr.types import Rollout, Sample

SAMPLE = Sample("1+1=", "2", source="data.jsonl:4")


def rollout(text: str) -> Rollout:
    return Rollout((1,), (2,), (-0.1,), text, "stop")


def boom(response, gold):
    raise ZeroDivisionError("bad")


@pytest.mark.parametrize("fn, problem", [
    (boom, "raised ZeroDivisionError: bad (sample data.jsonl:4)"),
    (lambda r, g: math.nan, "returned nan (not in [0, 1]) for sample data.jsonl:4"),
    (lambda r, g: 1.5, "returned 1.5"),
    (lambda r, g: "yes", "returned str, expected a float or Verdict"),
])
def test_failures_stop_the_run_with_the_sample_named(fn, problem):
    with pytest.raises(RewardError, match=problem.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[").replace("]", r"\]")):
        score_groups(fn, [SAMPLE], [[rollout("2")]], on_error="fail")


def test_on_error_zero_scores_zero_and_counts():
    def sometimes(response, gold):
        if response == "x":
            raise ValueError("nope")
        return Verdict(1.0, "ok", flags=("f",))

    groups, counts = score_groups(sometimes, [SAMPLE], [[rollout("2"), rollout("x"), rollout("x")]], on_error="zero")
    assert [s.reward for s in groups[0]] == [1.0, 0.0, 0.0]
    assert counts["reward/errors"] == 2 and counts["reward/flag_error"] == 2 and counts["reward/flag_f"] == 1


def test_import_function_errors():
    assert import_function("math:sqrt") is math.sqrt
    with pytest.raises(ConfigError, match="cannot import 'no_such_mod'"):
        import_function("no_such_mod:f")
    with pytest.raises(ConfigError, match="has no function 'nope'"):
        import_function("math:nope")
    with pytest.raises(ConfigError, match="expected 'package.module:function'"):
        import_function("math.sqrt")


def test_each_verifier_gets_its_own_settings():
    from rlvr.config import load_config
    from rlvr.orchestrate.scoring import build_reward_fn

    fmt = build_reward_fn(load_config(None, ["reward.verifier=format", "reward.format_template=boxed"]).reward)
    assert fmt("so \\boxed{5}", "").score == 1.0 and fmt("<answer>5</answer>", "").score == 0.0
    maths = build_reward_fn(load_config(None, ["reward.extract=['boxed']"]).reward)
    assert maths("the answer is 5", "5").score == 0.0 and maths("\\boxed{5}", "5").score == 1.0
    with pytest.raises(ConfigError, match="reward: unknown answer extractor"):
        build_reward_fn(load_config(None, ["reward.extract=['nope']"]).reward)


def test_an_in_process_judge_folder_is_found_like_model_path(tmp_path, monkeypatch):
    from rlvr.config.schema import JudgeSection, RewardSection
    from rlvr.orchestrate.components import judge_path_resolved

    monkeypatch.chdir(tmp_path)  # the relative folder is not under the working directory
    repo = Path(__file__).resolve().parents[2]
    judged = RewardSection(verifier="judge", judge=JudgeSection(model="models/tiny-arith"))
    assert judge_path_resolved(judged, repo).judge.model == str(repo / "models" / "tiny-arith")
    served = RewardSection(verifier="judge", judge=JudgeSection(backend="http", url="http://x/v1", model="m"))
    assert judge_path_resolved(served, repo).judge.model == "m"  # a served model's name, not a folder
