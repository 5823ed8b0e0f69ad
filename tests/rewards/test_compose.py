"""Composition: gates zero the reward, parts are a weighted mean, format can never outvote correctness."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from rlvr.errors import RewardError
from rlvr.rewards import Composite, CompositeVerdict, FormatVerifier, Verdict


def fixed(score: float, flags: tuple[str, ...] = ()):
    calls = []

    def verifier(response: str, gold: str) -> Verdict:
        calls.append((response, gold))
        return Verdict(score, f"fixed {score}", flags)

    verifier.calls = calls
    return verifier


def test_weighted_mean_of_parts_with_components_kept():
    reward = Composite(parts=[("correct", fixed(1.0), 3.0), ("style", fixed(0.5), 1.0)])
    verdict = reward(response="r", gold="g")
    assert isinstance(verdict, CompositeVerdict) and isinstance(verdict, Verdict)
    assert verdict.score == pytest.approx((3 * 1.0 + 1 * 0.5) / 4)  # 0.875
    assert verdict.components == {"correct": 1.0, "style": 0.5}
    assert "correct=1 (fixed 1.0)" in verdict.reason
    hash(verdict)  # still a frozen, hashable Verdict


def test_a_failed_gate_zeroes_the_reward_and_skips_the_parts():
    part = fixed(1.0)
    reward = Composite(parts=[("correct", part, 1.0)], gates=[("format", fixed(0.0, ("missing",)), 1.0)])
    verdict = reward(response="r", gold="g")
    assert verdict.score == 0.0 and verdict.reason.startswith("gate failed (format < 1)")
    assert verdict.flags == ("missing", "gate_failed")
    assert verdict.components == {"format": 0.0} and part.calls == []


def test_without_short_circuit_the_parts_still_run_and_are_logged():
    reward = Composite(parts=[("correct", fixed(1.0), 1.0)], gates=[("length", fixed(0.4), 0.5)],
                       short_circuit=False)
    verdict = reward(response="r", gold="g")
    assert verdict.score == 0.0 and verdict.components == {"length": 0.4, "correct": 1.0}


def test_a_passed_gate_does_not_enter_the_mean():
    reward = Composite(parts=[("correct", fixed(0.5), 1.0)], gates=[("format", fixed(0.7), 0.5)])
    assert reward(response="r", gold="g").score == 0.5


def test_gold_mapping_routes_each_component_its_own_gold():
    a, b = fixed(1.0), fixed(1.0)
    Composite(parts=[("correct", a, 1.0), ("instructions", b, 0.5)])(response="r", gold={"correct": "42", "instructions": "[]"})
    assert a.calls == [("r", "42")] and b.calls == [("r", "[]")]
    with pytest.raises(RewardError, match="no entry for component 'instructions'"):
        Composite(parts=[("correct", a, 1.0), ("instructions", b, 0.5)])(response="r", gold={"correct": "42"})


@pytest.mark.parametrize("parts,kwargs,message", [
    ([("correct", fixed(1), 1.0), ("format", fixed(1), 1.0)], {}, "could outvote"),
    ([("correct", fixed(1), 1.0), ("format_a", fixed(1), 0.6), ("format_b", fixed(1), 0.6)], {}, "1.2 in total"),
    ([("correct", fixed(1), 1.0), ("style", FormatVerifier(), 2.0)], {}, "could outvote"),  # marked by type
    ([("format", fixed(1), 0.1), ("correct", fixed(1), 1.0)], {}, "is a format term"),  # default: first part
    ([("correct", fixed(1), 1.0)], {"correctness": "answer"}, "not among the parts"),
    ([("correct", fixed(1), 0.0)], {}, "positive finite"),
    ([("correct", fixed(1), float("nan"))], {}, "positive finite"),
    ([("x", fixed(1), 1.0), ("x", fixed(1), 1.0)], {}, "repeated"),
    ([], {}, "at least one"),
    ([("correct", fixed(1), 1.0)], {"gates": [("g", fixed(1), 1.5)]}, r"threshold must be in \(0, 1\]"),
])
def test_construction_guards(parts, kwargs, message):
    with pytest.raises(ValueError, match=message):
        Composite(parts=parts, **kwargs)


def test_a_small_format_term_is_allowed_and_correctness_can_be_named():
    Composite(parts=[("format", fixed(1), 0.2), ("correct", fixed(1), 1.0)], correctness="correct")


@given(st.floats(min_value=0.01, max_value=10), st.floats(min_value=0.0, max_value=0.999))
def test_format_never_outvotes_correctness(correct_weight, fraction):
    """Any accepted weights: right-but-unformatted scores above formatted-but-wrong."""
    weight = correct_weight * fraction
    if weight <= 0:
        return
    right = Composite(parts=[("correct", fixed(1.0), correct_weight), ("format", fixed(0.0), weight)])
    wrong = Composite(parts=[("correct", fixed(0.0), correct_weight), ("format", fixed(1.0), weight)])
    assert right(response="r", gold="g").score > wrong(response="r", gold="g").score
