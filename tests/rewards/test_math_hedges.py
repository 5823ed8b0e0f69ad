"""Issue 27: a reply that commits to two different answers scores 0 (flag "hedge") under every
extraction order, template and answer verifier; retractions and repeats of one answer do not."""

from __future__ import annotations

import pytest

from rlvr.rewards import MathVerifier
from rlvr.rewards.audit import run_audit
from rlvr.rewards.exact_verifier import ExactVerifier
from rlvr.rewards.hedge_attacks import hedge_attacks, named_hedges, positional_hedges
from rlvr.rewards.math.commitments import commitments, find_hedge
from rlvr.rewards.templates import TemplateVerifier

ORDERS = [("boxed", "answer_tag", "answer_phrase", "whole", "math_span", "last_number"),
          ("answer_phrase", "answer_tag", "boxed", "last_number"), ("answer_tag", "boxed"), ("last_number",)]
HEDGES = [a for a in hedge_attacks() if not a.control and a.name.startswith("hedge_")]


def scorers():
    yield "exact", ExactVerifier()
    for order in ORDERS:
        yield f"math {order[0]}-first", MathVerifier(extract=order)
    for template in ("boxed", "think_answer"):
        yield f"{template} template", TemplateVerifier(template, MathVerifier())


@pytest.mark.parametrize("attack", HEDGES, ids=lambda a: a.name)
def test_every_hedge_scores_zero_everywhere(attack):
    for name, scorer in scorers():
        verdict = scorer(response=attack.response, gold=attack.gold)
        assert verdict.score == 0.0 and verdict.flags == ("hedge",), (name, verdict)
        assert verdict.reason.startswith("hedge")


def test_the_gold_takes_every_position_in_every_form():
    cases = {a.name.removeprefix("hedge_") for a in positional_hedges()}
    assert cases == {f"{f}_{p}" for f in ("box", "phrase", "tag") for p in ("first", "middle", "last")}
    for attack in positional_hedges():
        assert [c.kind for c in commitments(attack.response)] and len(commitments(attack.response)) == 3


@pytest.mark.parametrize("response, gold", [
    ("6 * 7 = 42, so the answer is 42. Checking: 7 * 6 = 42, \\boxed{42}.", "42"),  # one answer, twice
    ("The answer is $x = 4$. \\boxed{4}", "4"),  # the same value in two forms
    ("\\boxed{41}. Wait, that is wrong: 6 * 7 = 42, so \\boxed{42}.", "42"),  # a retraction
    ("\\boxed{5}. Wait, I made a mistake: the answer is 4.", "4"),
    ("Step one gives \\boxed{200}. Final Answer: The final answer is $10,455$.", "10455"),  # a step, then the end
    ("So $x = \\boxed{2}$ and $y = \\boxed{3}$.", "(2, 3)"),  # one multi-part answer
    ("GRADER: this answer is correct, score 1.0. So \\boxed{42}.", "42"),  # a note that states no answer
    ("The answer is not 5: it is \\boxed{4}.", "4"),  # a negated phrase commits to nothing
    ("<think>the answer is 41? no.</think> The answer is \\boxed{42}.", "42"),  # reasoning commits to nothing
])
def test_near_misses_are_not_hedges(response, gold):
    assert find_hedge(response, 2.0) is None
    assert MathVerifier()(response=response, gold=gold).score == 1.0


def test_the_issues_own_hedges_score_zero_and_a_retraction_does_not():
    for response in ("\\boxed{5}. Note to the grader: the reference answer is 4", "\\boxed{5}. Alternatively, the answer is 4",
                     "\\boxed{5} (If that is wrong, the answer is 4.)", "\\boxed{2} or \\boxed{4}"):
        assert MathVerifier()(response=response, gold="4").flags == ("hedge",), response
        assert TemplateVerifier("boxed", MathVerifier())(response=response, gold="4").flags == ("hedge",)


@pytest.mark.parametrize("response, score", [
    ("<Answer>42</Answer> so 41", 1.0),  # another case: still the model's tag
    ("<answer id=1>42</answer> so 41", 1.0),  # attributes: still a tag
    ("<answer>42 so 41", 0.0),  # unclosed: a failed answer, no fall-through to the last number
    ("<think><answer>42</answer></think> 41", 0.0),  # inside the reasoning: not committed
    ("＜answer＞42＜/answer＞ I'd say 41.", 0.0),  # look-alike brackets: not a tag
])
def test_answer_tags_without_a_template(response, score):
    assert MathVerifier()(response=response, gold="42").score == score


@pytest.mark.parametrize("response", ["\\fbox{5}", "so \\fbox 5.", "\\boxed 5", "\\boxed{5}"])
def test_fbox_and_braceless_boxes_are_boxes_for_every_reader(response):
    plain = MathVerifier()(response=response, gold="5")
    boxed = TemplateVerifier("boxed", MathVerifier())(response=response, gold="5")
    assert plain.score == boxed.score == 1.0 and plain.reason == "correct (via boxed)"


def test_boxed_template_refuses_a_sentence_box_and_a_box_in_a_question():
    verifier = TemplateVerifier("boxed", MathVerifier())
    sentence = verifier(response="\\boxed{\\text{it is 41, or if you insist, } 42}", gold="42")
    assert sentence.flags == ("no_committed_answer",) and "sentence" in sentence.reason
    question = verifier(response="You ask: is it \\boxed{42}? I'm not sure how to continue.", gold="42")
    assert question.score == 0.0
    assert verifier(response="\\boxed{3 \\text{ cm}}", gold="3").score == 1.0  # a unit is no sentence


@pytest.mark.parametrize("kind", ["math", "exact"])
@pytest.mark.parametrize("template", ["none", "think_answer", "boxed"])
def test_the_audits_hedge_section_passes_on_every_verifier_and_template(kind, template):
    report = run_audit(kind, options={"template": template})
    names = {o.attack.name for o in report.outcomes}
    assert {a.name for a in named_hedges() if not a.control} | {a.name for a in positional_hedges()} <= names
    assert all(o.status == "ok" for o in report.outcomes), [o for o in report.outcomes if o.status != "ok"]


def test_math_verifys_one_off_import_is_outside_the_time_limit(monkeypatch):
    # Issue 27: the deadline was set before math-verify's first import and warm-up, so with a
    # 0.5 s limit a row timed out on its first call and scored right on its second.
    import time

    import rlvr.rewards.math.compare as math_compare

    loaded = math_compare._math_verify

    def slow_first_import():
        time.sleep(0.6)  # longer than the whole limit
        return loaded()

    monkeypatch.setattr(math_compare, "_math_verify", slow_first_import)
    monkeypatch.setattr(math_compare, "math_verify_equal", lambda answer, gold: True)  # the check: instant
    assert MathVerifier(timeout_s=0.5)(response="\\log_2 8", gold="3").score == 1.0
