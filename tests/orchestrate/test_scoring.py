"""A reward function that raises, returns NaN or a wrong type is reported, never swallowed."""

from __future__ import annotations

import inspect
import math
from pathlib import Path

import pytest

from rlvr.config.schema import RewardSection
from rlvr.errors import ConfigError, RewardError
from rlvr.orchestrate.scoring import VERIFIER_OPTIONS, import_function, score_groups
from rlvr.rewards import VERIFIERS, MathVerifier, Verdict
from rlvr.rewards.calling import call_reward
from rlvr.rewards.templates import TemplateVerifier
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

    fmt = build_reward_fn(load_config(None, ["reward.verifier=format", "reward.template=boxed"]).reward)
    assert fmt(response="so \\boxed{5}", gold="").score == 1.0 and fmt(response="<answer>5</answer>", gold="").score == 0.0
    maths = build_reward_fn(load_config(None, ["reward.math.extract=['boxed']", "reward.math.timeout_s=0.5"]).reward)
    assert maths(response="the answer is 5", gold="5").score == 0.0 and maths(response="\\boxed{5}", gold="5").score == 1.0
    assert maths.timeout_s == 0.5
    code = VERIFIER_OPTIONS["code"](load_config(None, ["reward.verifier=code", "reward.code.timeout_s=7",
                                                       "reward.code.test_timeout_s=3"]).reward)
    assert (code["limits"].wall_s, code["limits"].test_wall_s) == (7.0, 3.0)  # separate settings
    with pytest.raises(ConfigError, match="reward: unknown answer extractor"):
        build_reward_fn(load_config(None, ["reward.math.extract=['nope']"]).reward)


@pytest.mark.parametrize("name", sorted(VERIFIER_OPTIONS))
def test_the_section_defaults_are_the_verifiers_own(name):
    """One set of defaults: a verifier built from an untouched [reward] section (training, `rlvr
    verify`, `rlvr audit`) is the verifier `VERIFIERS[name]()` gives a Python caller."""
    section = RewardSection(verifier=name, template="think_answer" if name == "format" else "none")
    parameters = inspect.signature(VERIFIERS[name]).parameters
    options = VERIFIER_OPTIONS[name](section)
    assert options == {key: parameters[key].default for key in options}


def test_a_template_makes_training_score_only_the_committed_answer():
    from rlvr.config import load_config
    from rlvr.orchestrate.scoring import build_reward_fn

    for verifier in ("math", "exact"):
        fn = build_reward_fn(load_config(None, [f"reward.verifier={verifier}", "reward.template=think_answer"]).reward)
        assert isinstance(fn, TemplateVerifier) and fn.max_chars == fn.inner.max_chars
        groups, counts = score_groups(fn, [Sample("6*7=", "42", source="x")], [[
            rollout("<think>6 * 7 = 42</think><answer>42</answer>"),
            rollout("<think>6 * 7 = 42</think> so 42"),
            rollout("<think>6 * 7 = 42</think><answer>42"),
        ]], on_error="fail")
        assert [s.reward for s in groups[0]] == [1.0, 0.0, 0.0] and counts["reward/flag_no_committed_answer"] == 2
    plain = build_reward_fn(load_config(None, []).reward)
    assert not isinstance(plain, TemplateVerifier)  # template = "none" is the default
    exact = build_reward_fn(load_config(None, ["reward.verifier=exact", "reward.template=think_answer"]).reward)
    grid = "1 2\n3 4"  # the committed answer is compared whole, not by its last line
    assert exact(response=f"<think>fill</think><answer>{grid}</answer>", gold=grid).score == 1.0
    assert exact(response="<think>fill</think><answer>0 0\n3 4</answer>", gold=grid).score == 0.0


def test_removed_and_incoherent_reward_keys_are_named_with_their_line(tmp_path):
    from rlvr.config import load_config

    recipe = tmp_path / "old.toml"
    recipe.write_text('[reward]\nverifier = "math"\ntimeout_s = 3.0\n')
    with pytest.raises(ConfigError, match=r"old.toml:3: reward.timeout_s: removed: .*reward.math.timeout_s"):
        load_config(recipe)
    with pytest.raises(ConfigError, match="reward.format_template: renamed reward.template"):
        load_config(None, ["reward.verifier=format", "reward.format_template=boxed"])
    with pytest.raises(ConfigError, match="the format verifier checks the answer template"):
        load_config(None, ["reward.verifier=format"])
    for verifier in ("code", "instructions", "judge"):
        with pytest.raises(ConfigError, match=f"applies to the verifiers math, exact, format, rubric, not verifier '{verifier}'"):
            load_config(None, [f"reward.verifier={verifier}", "reward.template=boxed"])
    with pytest.raises(ConfigError, match="not reward.function"):
        load_config(None, ["reward.function=math:sqrt", "reward.template=boxed"])


def test_functions_are_called_by_name_when_their_parameters_say_so():
    def swapped(gold, response):  # named parameters in the other order: called by name
        return float(response == "r" and gold == "g")

    def needs(gold, response, prompt):
        return float((response, gold, prompt) == ("r", "g", "p"))

    needs.needs_prompt = True
    assert call_reward(swapped, "r", "g", "p") == 1.0
    assert call_reward(lambda a, b: float((a, b) == ("r", "g")), "r", "g", "p") == 1.0  # positional
    assert call_reward(needs, "r", "g", "p") == 1.0
    with pytest.raises(TypeError):  # a built-in verifier cannot be given the two strings by position
        MathVerifier()("42", "42")


def test_an_in_process_judge_folder_is_found_like_model_path(tmp_path, monkeypatch):
    from rlvr.config.schema import JudgeSection, RewardSection
    from rlvr.orchestrate.components import judge_path_resolved

    monkeypatch.chdir(tmp_path)  # the relative folder is not under the working directory
    repo = Path(__file__).resolve().parents[2]
    judged = RewardSection(verifier="judge", judge=JudgeSection(model="models/tiny-arith"))
    assert judge_path_resolved(judged, repo).judge.model == str(repo / "models" / "tiny-arith")
    served = RewardSection(verifier="judge", judge=JudgeSection(backend="http", url="http://x/v1", model="m"))
    assert judge_path_resolved(served, repo).judge.model == "m"  # a served model's name, not a folder
