"""Instruction-following constraints: each kind passes and fails by hand, plus counting invariants."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, strategies as st

from rlvr.errors import RewardError
from rlvr.rewards import VERIFIERS, InstructionVerifier
from rlvr.rewards.instructions import (
    CONSTRAINTS,
    count_bullets,
    count_paragraphs,
    count_sentences,
    count_words,
    parse_constraint,
)


def holds(response: str, **spec) -> bool:
    return parse_constraint(spec)(response).score == 1.0


# (spec, a response that satisfies it, one that does not)
CASES = [
    ({"kind": "word_count", "relation": "at_least", "value": 3}, "one two three", "one two"),
    ({"kind": "word_count", "relation": "at_most", "value": 2}, "don't stop", "not so fast"),
    ({"kind": "word_count", "relation": "exactly", "value": 2}, "well-known fact.", "a b c"),
    ({"kind": "sentence_count", "relation": "exactly", "value": 2}, "Hi there. How are you?", "One. Two! Three?"),
    ({"kind": "sentence_count", "relation": "at_least", "value": 1}, "no final stop", "..."),
    ({"kind": "paragraph_count", "relation": "exactly", "value": 2}, "a\nb\n\n  \nc", "a\nb\nc"),
    ({"kind": "bullet_count", "relation": "at_least", "value": 2}, "- a\n  * b\n• c", "- a\n-b\n1. c"),
    ({"kind": "required_words", "words": ["cat", "Dog"]}, "The dog saw a CAT.", "The category dog."),
    ({"kind": "forbidden_words", "words": ["very"]}, "Every day", "It is Very good"),
    ({"kind": "no_commas"}, "No commas here.", "One, two"),
    ({"kind": "json_output"}, '```json\n{"a": [1, 2]}\n```', "{'a': 1}"),
    ({"kind": "json_output"}, ' [1, 2] ', "Here it is: [1, 2]"),
    ({"kind": "starts_with", "phrase": "Dear Sir"}, "  dear sir, hello", "Hello, dear sir"),
    ({"kind": "ends_with", "phrase": "Any other questions?"}, "Done. Any other questions?\n", "Any other questions? Bye"),
    ({"kind": "lowercase"}, "all small, 123.", "Not small"),
    ({"kind": "lowercase"}, "ok", "123"),  # no letters at all is not "all lowercase"
    ({"kind": "uppercase"}, "LOUD NOISES!", "LOUD noises"),
    ({"kind": "keyword_frequency", "keyword": "ai", "relation": "exactly", "value": 2},
     "AI here, ai there, said Aiden", "AI only once; air and rain do not count"),
]


@pytest.mark.parametrize("spec,good,bad", CASES, ids=[f"{c[0]['kind']}-{i}" for i, c in enumerate(CASES)])
def test_each_constraint_passes_and_fails(spec, good, bad):
    assert holds(good, **spec), parse_constraint(spec)(good).reason
    verdict = parse_constraint(spec)(bad)
    assert verdict.score == 0.0 and verdict.reason


def test_every_kind_has_a_hand_case():
    assert {spec["kind"] for spec, _, _ in CASES} == set(CONSTRAINTS)


def test_counting_rules():
    # it's | a | well-known | fact | check (underscore splits) | 42 | times
    assert count_words("It's a well-known fact_check, 42 times.") == 7
    assert count_sentences("e.g. this") == 3  # documented: each period of "e.g." ends one
    assert count_paragraphs("\n\n  \n") == 0 and count_paragraphs("one") == 1
    assert count_bullets("-no space\n- yes") == 1


def test_verifier_scores_the_fraction_met_and_names_the_failures():
    gold = json.dumps([{"kind": "lowercase"}, {"kind": "no_commas"},
                       {"kind": "word_count", "relation": "at_least", "value": 5}])
    verdict = InstructionVerifier()(response="hello, world", gold=gold)
    assert verdict.score == pytest.approx(1 / 3)  # lowercase holds; commas and word count fail
    assert verdict.reason.startswith("1/3 constraints met")
    assert "no_commas" in verdict.reason and "2 words, need at least 5" in verdict.reason
    assert InstructionVerifier(strict=True)(response="hello, world", gold=gold).score == 0.0
    assert InstructionVerifier(strict=True)(response="hello world again and more", gold=gold).score == 1.0


def test_gold_forms_list_object_and_python_data():
    specs = [{"kind": "uppercase"}]
    verifier = VERIFIERS["instructions"]()
    for gold in (json.dumps(specs), json.dumps({"constraints": specs}), specs, {"constraints": specs}):
        assert verifier(response="YES", gold=gold).score == 1.0


@pytest.mark.parametrize("gold,message", [
    ('[{"kind": "word_cont", "relation": "at_least", "value": 3}]', "did you mean 'word_count'"),
    ('[{"kind": "no_commas"}, {"kind": "word_count", "relation": "more", "value": 3}]', "constraint 1"),
    ('[{"kind": "word_count", "relation": "at_least", "value": -1}]', "non-negative integer"),
    ('[{"kind": "word_count", "relation": "at_least", "value": true}]', "non-negative integer"),
    ('[{"kind": "word_count", "relation": "at_least"}]', "takes ['relation', 'value']"),
    ('[{"kind": "no_commas", "extra": 1}]', "no parameters"),
    ('[{"kind": "required_words", "words": []}]', "non-empty list"),
    ('[{"kind": "starts_with", "phrase": "  "}]', "must not be empty"),
    ('[{"relation": "at_least"}]', "string 'kind'"),
    ("[]", "non-empty list"),
    ("{not json", "not valid JSON"),
])
def test_malformed_constraints_raise_naming_the_constraint(gold, message):
    with pytest.raises(RewardError, match=message.replace("[", r"\[").replace("(", r"\(")):
        InstructionVerifier()(response="anything", gold=gold)


def test_too_long_response_scores_zero_with_a_flag():
    verdict = InstructionVerifier(max_chars=5)(response="a" * 6, gold='[{"kind": "lowercase"}]')
    assert (verdict.score, verdict.flags) == (0.0, ("too_long",))


words = st.lists(st.from_regex(r"[a-z]{1,8}", fullmatch=True), max_size=30)


@given(words, st.integers(min_value=0, max_value=35))
def test_word_count_relations_agree_with_the_count(ws, value):
    text = " ".join(ws)
    n = len(ws)
    at_least = holds(text, kind="word_count", relation="at_least", value=value)
    at_most = holds(text, kind="word_count", relation="at_most", value=value)
    exactly = holds(text, kind="word_count", relation="exactly", value=value)
    assert count_words(text) == n
    assert (at_least, at_most, exactly) == (n >= value, n <= value, n == value)
    assert at_least or at_most  # every count is on one side of the value
    assert exactly == (at_least and at_most)


@given(words, st.integers(min_value=0, max_value=5))
def test_keyword_frequency_counts_inserted_copies(ws, copies):
    ws = [w for w in ws if w != "zebra"]
    text = " ".join(ws + ["Zebra"] * copies)
    assert holds(text, kind="keyword_frequency", keyword="zebra", relation="exactly", value=copies)
