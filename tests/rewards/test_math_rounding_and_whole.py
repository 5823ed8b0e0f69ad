"""Issue 27: the rounded-gold rule only for golds known to be rounded; a whole reply that
abstains abstains; a labelled working is not read whole."""

from __future__ import annotations

import pytest

from rlvr.config.schema import RewardSection
from rlvr.evaluate.vote import answer_key
from rlvr.rewards import MathVerifier
from rlvr.rewards.build import build_verifier
from rlvr.rewards.math.extract import DEFAULT_EXTRACT, extract_answer


@pytest.mark.parametrize("response, gold, plain, rounded", [
    ("0.1254", "0.125", 0, 1),  # an exact gold: another number; a rounded one: within half a unit
    ("12.54", "12.5", 0, 1),
    ("2.2361", "2.236", 0, 1),
    ("\\sqrt5", "2.236", 0, 1),
    ("2\\pi", "6.28", 0, 1),
    ("0.693", "0.6931", 0, 0),  # less precise than the gold: wrong either way
    ("0.125", "0.125", 1, 1),
])
def test_rounded_gold_rule_needs_the_flag(response, gold, plain, rounded):
    assert MathVerifier()(response=response, gold=gold).score == plain
    assert MathVerifier(rounded_golds=True)(response=response, gold=gold).score == rounded


def test_a_gold_written_as_approximate_is_rounded_and_the_recipe_key_reaches_the_verifier():
    assert MathVerifier()(response="2.2361", gold="\\approx 2.236").score == 1.0
    assert MathVerifier()(response="2.2361", gold="≈ 2.236").score == 1.0
    assert MathVerifier()(response="2.9", gold="\\approx 2.236").score == 0.0
    built = build_verifier("math", RewardSection(verifier="math", math={"rounded_golds": True}))
    assert built(response="0.1254", gold="0.125").score == 1.0
    assert build_verifier("math", RewardSection(verifier="math"))(response="0.1254", gold="0.125").score == 0.0


@pytest.mark.parametrize("reply", ["no idea", "I don't know", "I dont know.", "not sure", "idk", "Unknown"])
def test_an_abstaining_reply_gives_no_answer_and_no_vote(reply):
    assert extract_answer(reply, DEFAULT_EXTRACT) is None
    assert answer_key(None) is None  # what maj@k counts as an abstention
    assert MathVerifier()(response=reply, gold="5").reason == "no answer found"


def test_word_answers_and_labelled_workings_still_read():
    assert MathVerifier()(response="Monday", gold="\\text{Monday}").score == 1.0
    assert MathVerifier()(response="9*9=80+1: 81", gold="81").score == 1.0
    assert MathVerifier()(response="9*9=80+1: 81", gold="80").score == 0.0
