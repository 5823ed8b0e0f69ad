"""The exact verifier: which answer it extracts, how it normalises, and what it refuses."""

from __future__ import annotations

import time

import pytest

from rlvr.rewards import VERIFIERS, ExactVerifier
from rlvr.rewards.exact_verifier import extract_final, normalize


@pytest.mark.parametrize(
    ("response", "found"),
    [
        ("<answer>b</answer> then <answer>olleh</answer>", ("answer_tag", "olleh")),  # last tag
        ("<answer> </answer>", None),  # an empty last tag is no answer
        ("\\boxed{a} and finally \\boxed{olleh}", ("boxed", "olleh")),  # last box
        ("\\boxed{}\nolleh", None),  # no stray line after an empty box
        ("so it is \\boxed{olleh", None),  # unclosed
        ("<answer>tag</answer> \\boxed{box}", ("answer_tag", "tag")),  # tag before box
        ("thinking...\n\nFinal answer: olleh\n\n", ("last_line", "olleh")),
        ("Answer =  olleh", ("last_line", "olleh")),
        ("", None),
        ("   \n  ", None),
    ],
)
def test_extraction_rules(response, found):
    assert extract_final(response) == found


@pytest.mark.parametrize(
    ("text", "normal"),
    [("  Hello \n  World. ", "hello world"), ("A  B", "a b"), ("1, 2", "1, 2"), ("...", "..")],
)
def test_normalisation(text, normal):
    assert normalize(text) == normal


def test_correct_wrong_and_case():
    verifier = ExactVerifier()
    assert verifier(response="<answer>OLLEH</answer>", gold="olleh").score == 1.0
    assert verifier(response="<answer>olleh</answer>", gold="olleh").reason == "correct (via answer_tag)"
    wrong = verifier(response="<answer>hello</answer>", gold="olleh")
    assert wrong.score == 0.0 and "got 'hello'" in wrong.reason
    assert ExactVerifier(case_sensitive=True)(response="<answer>OLLEH</answer>", gold="olleh").score == 0.0
    # no partial credit for a substring, whatever its share of the reply
    assert verifier(response="<answer>olleh olleh2</answer>", gold="olleh").score == 0.0


def test_multi_line_gold_matches_a_tag_not_the_last_line():
    grid = "1 2\n3 4"
    assert ExactVerifier()(response=f"<answer>\n{grid}\n</answer>", gold=grid).score == 1.0
    assert ExactVerifier()(response=f"Here:\n{grid}", gold=grid).score == 0.0  # last line is only "3 4"


def test_giant_reply_is_refused_without_reading():
    start = time.perf_counter()
    verdict = ExactVerifier(max_chars=1000)(response="\\boxed{" * 10_000_000 + "x", gold="x")
    assert verdict.score == 0.0 and verdict.flags == ("too_long",)
    assert time.perf_counter() - start < 0.5


def test_registered_and_checks_its_options():
    assert VERIFIERS["exact"] is ExactVerifier
    with pytest.raises(ValueError, match="max_chars"):
        ExactVerifier(max_chars=0)
