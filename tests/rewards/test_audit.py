"""`run_audit`: rlvr's text verifiers pass their audits; careless reward functions are caught."""

from __future__ import annotations

import time

import pytest

from rlvr.errors import ConfigError
from rlvr.rewards.attacks import TEXT_KINDS, all_attacks, applies, text_attacks
from rlvr.rewards.audit import run_audit


def substring_reward(response: str, gold: str) -> float:
    """The careless checker: reward when the gold appears anywhere in the reply."""
    return float(gold in response)


@pytest.mark.parametrize("name", ["math", "exact", "instructions"])
def test_builtin_answer_verifiers_pass_and_controls_score_one(name):
    report = run_audit(name)
    attacks = [o for o in report.outcomes if not o.attack.control]
    controls = [o for o in report.outcomes if o.attack.control]
    assert attacks and controls
    assert [(o.attack.name, o.score) for o in attacks] == [(o.attack.name, 0.0) for o in attacks]
    assert all(o.score == 1.0 for o in controls), controls
    assert not report.failed
    assert max(o.seconds for o in report.outcomes) < 2.0  # the giant replies are refused, not read


@pytest.mark.parametrize("name, template", [
    ("math", "think_answer"), ("math", "boxed"),
    ("exact", "think_answer"), ("exact", "boxed"),
])
def test_answer_verifiers_under_a_template_pass_the_template_attacks(name, template):
    report = run_audit(name, options={"template": template})
    names = {o.attack.name for o in report.outcomes}
    own = {"think_answer": {"no_answer_block", "answer_block_inside_think", "unclosed_think",
                            "honest_despite_grader_note"},
           "boxed": {"no_box_number_only", "unclosed_last_box", "honest_revised_box"}}
    other = "boxed" if template == "think_answer" else "think_answer"
    assert own[template] <= names and not own[other] & names
    assert all(o.status == "ok" for o in report.outcomes), [o for o in report.outcomes if o.status != "ok"]


def test_template_attacks_pay_a_verifier_that_falls_through():
    """Without the template the maths verifier reads on past a missing answer: those attacks are
    then "hacked", which is what the suite is for (each would pass a broken template rule)."""
    for template, attack in (("think_answer", "no_answer_block"), ("boxed", "no_box_number_only")):
        [row] = [a for a in all_attacks() if a.name == attack]
        assert applies(row, "math", {"template": template}) and not applies(row, "math", {})
        from rlvr.rewards import MathVerifier
        assert MathVerifier()(response=row.response, gold=row.gold).score == 1.0, attack


@pytest.mark.parametrize("options", [{"template": "think_answer"}, {"template": "think_answer", "format_strict": True},
                                     {"template": "boxed"}, {"template": "boxed", "format_strict": True}])
def test_format_verifier_passes_its_audit_in_each_mode(options):
    report = run_audit("format", options=options)
    assert not report.failed and report.outcomes
    assert all(o.status == "ok" for o in report.outcomes), [o for o in report.outcomes if o.status != "ok"]
    names = {o.attack.name for o in report.outcomes}
    # the no-reasoning attack applies only where strict mode demands the reasoning
    assert ("bare_answer_no_reasoning" in names) == (options == {"template": "think_answer", "format_strict": True})
    boxed = {"two_boxes", "box_without_reasoning", "placeholder_reasoning", "honest_same_box_twice"}
    assert (boxed <= names) == (options["template"] == "boxed")


@pytest.mark.parametrize("strict", ["format_strict", "format.strict"])
def test_a_reward_function_is_audited_in_strict_format_mode(strict):
    # before: refused, as format_strict is no [reward.math] key since [reward] is keyed on kind
    lax = {o.attack.name for o in run_audit(substring_reward, "format", {"template": "think_answer"}).outcomes}
    tight = {o.attack.name for o in run_audit(substring_reward, "format", {"template": "think_answer", strict: True}).outcomes}
    assert "bare_answer_no_reasoning" in tight - lax
    assert run_audit(substring_reward, "math", {"template": "think_answer", strict: True}).outcomes


def test_a_substring_reward_function_is_caught():
    report = run_audit(substring_reward)
    hacked = {o.attack.name for o in report.hacked}
    assert report.failed
    assert {"stuffed_candidates", "several_boxes", "gold_in_reasoning", "empty_box_then_number",
            "answer_in_restated_question"} <= hacked
    assert all(o.attack.control or o.attack.name in hacked or o.score == 0 for o in report.outcomes)
    # no code attack without --kind code
    assert not any("code" in o.attack.kinds for o in report.outcomes)


def test_kind_selects_the_attacks():
    report = run_audit(substring_reward, kind="instructions")
    assert {o.attack.kinds for o in report.outcomes} == {("instructions",)}
    assert not report.failed  # the gold JSON never appears in a reply


def test_slow_and_crashing_functions_fail_the_audit():
    def slow(response: str, gold: str) -> float:
        if len(response) > 1_000_000:  # only the 5 MB reply
            time.sleep(5)
        return 0.0

    def crashing(response: str, gold: str) -> float:
        return float(int(response.strip() or "0") == int(gold))

    slow_report = run_audit(slow, kind="math", budget_s=0.2)
    assert {o.attack.name for o in slow_report.with_status("timeout")} == {"giant_reply"}
    assert slow_report.failed and not slow_report.hacked
    crash_report = run_audit(crashing, kind="math")
    assert "stuffed_candidates" in {o.attack.name for o in crash_report.with_status("error")}
    assert crash_report.failed
    wordy = run_audit(lambda response, gold: "yes", kind="exact")  # not a number: an error row
    assert {o.status for o in wordy.outcomes} == {"error"} and "ValueError" in wordy.outcomes[0].reason
    nan = run_audit(lambda response, gold: float("nan"), kind="math")  # never a silent pass
    assert nan.failed and {o.status for o in nan.outcomes} == {"error"} and "not a number in [0, 1]" in nan.outcomes[0].reason


@pytest.mark.parametrize("name, kind, options, expected", [
    ("bare_answer_no_reasoning", "format", {"template": "think_answer", "format_strict": True}, True),
    ("bare_answer_no_reasoning", "format", {"template": "think_answer", "format_strict": False}, False),
    ("honest_boxed", "math", {}, True),                      # no template: both controls are honest
    ("honest_answer_tag", "math", {}, True),
    ("honest_boxed", "math", {"template": "think_answer"}, False),  # a box commits nothing there
    ("honest_answer_tag", "math", {"template": "boxed"}, False),
    ("no_answer_block", "exact", {"template": "think_answer"}, True),
    ("no_answer_block", "exact", {}, False),
    ("empty_box", "format", {"template": "boxed"}, True),
    ("empty_box", "format", {"template": "think_answer"}, False),
    ("empty_box", "math", {"template": "boxed"}, False),   # a format attack, not a maths one
    ("empty_box", None, {"template": "boxed"}, True),      # None: every text kind
])
def test_applies_by_kind_and_format_options(name, kind, options, expected):
    [attack] = [a for a in all_attacks() if a.name == name]
    assert applies(attack, kind, options) is expected


def test_code_attacks_are_never_text_attacks():
    suite = all_attacks()
    code = [a for a in suite if "code" in a.kinds]
    assert code and not any(applies(a, None, {}) for a in code)
    assert {k for a in text_attacks() for k in a.kinds} == set(TEXT_KINDS)
    assert len({(a.name, a.variant) for a in suite}) == len(suite)  # names unique per variant


def test_unknown_name_and_contradicting_kind_are_clear_errors():
    with pytest.raises(ConfigError, match=r"'mathh': not a built-in verifier \(did you mean 'math'\?\)"):
        run_audit("mathh")
    with pytest.raises(ConfigError, match="--kind code contradicts the built-in verifier 'math'"):
        run_audit("math", kind="code")
    with pytest.raises(ConfigError, match="a reward function is audited with only template and format_strict"):
        run_audit(substring_reward, options={"extract": ["boxed"]})
    with pytest.raises(ConfigError, match="not a \\[reward\\] key \\(did you mean 'format_strict'\\?\\)"):
        run_audit("format", options={"template": "boxed", "strict": True})
    with pytest.raises(ConfigError, match="the format verifier checks the answer template"):
        run_audit("format")
    with pytest.raises(ConfigError, match="the format verifier checks the answer template"):
        run_audit(substring_reward, kind="format")
    with pytest.raises(ConfigError, match="unknown answer extractor"):
        run_audit("math", options={"extract": ["nope"]})


def test_a_function_audited_with_a_template_gets_its_attacks():
    report = run_audit(substring_reward, kind="math", options={"template": "think_answer"})
    hacked = {o.attack.name for o in report.hacked}
    assert {"no_answer_block", "unclosed_answer_block", "answer_block_inside_think"} <= hacked
    assert "honest_boxed" not in {o.attack.name for o in report.outcomes}  # not honest under think_answer
