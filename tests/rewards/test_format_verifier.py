"""Tests for the format verifier: both templates, strict and loose, and the ways to miss them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rlvr.rewards import VERIFIERS
from rlvr.rewards.format_verifier import FormatVerifier, find_boxes
from rlvr.rewards.verdict import Verdict

OK_THINK = "<think>2 + 2 is 4</think><answer>4</answer>"


@pytest.mark.parametrize(
    ("response", "strict_reason", "loose_reason"),
    [
        (OK_THINK, "format ok (think_answer, strict)", "format ok (think_answer, loose)"),
        (
            "<think>\nsteps\n</think>\n\n<answer> 4 </answer>\n",
            "format ok (think_answer, strict)",
            None,
        ),
        # the prompt ended with <think>: only its closing tag is in the response
        (
            "steps</think><answer>4</answer>",
            "tags out of template order: </think><answer></answer>",
            None,
        ),
        ("Sure! <answer>4</answer>", "tags out of template order: <answer></answer>", None),
        (OK_THINK + " Hope this helps!", "text outside the <think> and <answer> blocks", None),
        ("Intro " + OK_THINK, "text outside the <think> and <answer> blocks", None),
        ("<think></think><answer>4</answer>", "empty <think>", None),  # loose: thinking is optional
        # and the failures of both
        ("4", "no <answer> tag", "no <answer> tag"),
        ("<think>hmm</think><answer>4", "unclosed <answer>", "unclosed <answer>"),
        ("<think>hmm<answer>4</answer>", "unclosed <think>", "unclosed <think>"),
        (
            "<think>a</think><answer>4</answer><answer>5</answer>",
            "2 <answer> tags",
            "2 <answer> tags",
        ),
        ("<think>a</think><think>b</think><answer>4</answer>", "2 <think> tags", "2 <think> tags"),
        (
            "<answer>4</answer><think>a</think>",
            "tags out of template order: <answer></answer><think></think>",
            "tags out of template order: <answer></answer><think></think>",
        ),
        (
            "<think><answer>4</answer></think>",
            "tags out of template order: <think><answer></answer></think>",
            "tags out of template order: <think><answer></answer></think>",
        ),
        ("<think>a</think><answer>  </answer>", "empty <answer>", "empty <answer>"),
        (
            "<think>...</think><answer>...</answer>",
            "template echoed: <answer> holds only '...'",
            "template echoed: <answer> holds only '...'",
        ),
        (
            "<think>reasoning</think><answer>answer</answer>",
            "template echoed: <answer> holds only 'answer'",
            "template echoed: <answer> holds only 'answer'",
        ),
        (
            "<think>your reasoning</think><answer>4</answer>",
            "template echoed: <think> holds only 'your reasoning'",
            None,
        ),
    ],
)
def test_think_answer(response, strict_reason, loose_reason):
    for strict, reason in (
        (True, strict_reason),
        (False, loose_reason or "format ok (think_answer, loose)"),
    ):
        verdict = FormatVerifier("think_answer", strict=strict)(response=response)
        assert verdict.reason == reason, (strict, verdict)
        assert verdict.score == (1.0 if reason.startswith("format ok") else 0.0)


@pytest.mark.parametrize(
    ("response", "strict_reason", "loose_reason"),
    [
        ("so the answer is \\boxed{4}.", "format ok (boxed, strict)", "format ok (boxed, loose)"),
        ("halve it: $\\boxed{\\frac{1}{2}}$", "format ok (boxed, strict)", None),
        ("the set is \\boxed{\\{1, 2\\}}", "format ok (boxed, strict)", None),  # escaped braces
        ("so \\boxed{\\boxed{4}}", "format ok (boxed, strict)", None),  # one box, holding another
        ("\\boxed{4} because reasons", "text after \\boxed{}", None),
        # the same answer boxed twice is one answer; strict still ends at the last box
        ("2 + 2 = \\boxed{4}, check: \\boxed{ 4 }.", "format ok (boxed, strict)", None),
        ("\\boxed{4} or \\boxed{4} again", "text after \\boxed{}", None),
        # reasoning outside the box: a bare box, math delimiters or a label are not reasoning
        ("\\boxed{4}", "no reasoning outside \\boxed{}", "no reasoning outside \\boxed{}"),
        ("$\\boxed{4}$.", "no reasoning outside \\boxed{}", "no reasoning outside \\boxed{}"),
        ("\\[\\boxed{4}\\]", "no reasoning outside \\boxed{}", "no reasoning outside \\boxed{}"),
        (
            "Answer: \\boxed{4}",
            "template echoed: the reasoning outside \\boxed{} holds only 'Answer:'",
            "template echoed: the reasoning outside \\boxed{} holds only 'Answer:'",
        ),
        ("the answer is 4", "no \\boxed{}", "no \\boxed{}"),
        ("\\boxed{4", "unclosed \\boxed{", "unclosed \\boxed{"),
        (
            "\\boxed{3} or maybe \\boxed{4}",
            "2 different \\boxed{} answers (one answer only)",
            "2 different \\boxed{} answers (one answer only)",
        ),
        (
            "it is \\boxed{4}, not \\boxed{4.0}",  # the rule compares text, not values
            "2 different \\boxed{} answers (one answer only)",
            "2 different \\boxed{} answers (one answer only)",
        ),
        ("so \\boxed{4} and \\boxed{}", "empty \\boxed{}", "empty \\boxed{}"),
        ("so \\boxed{}", "empty \\boxed{}", "empty \\boxed{}"),
        ("\\boxed{ }", "empty \\boxed{}", "empty \\boxed{}"),
        (
            "\\boxed{your answer}",
            "template echoed: \\boxed{} holds only 'your answer'",
            "template echoed: \\boxed{} holds only 'your answer'",
        ),
    ],
)
def test_boxed(response, strict_reason, loose_reason):
    for strict, reason in (
        (True, strict_reason),
        (False, loose_reason or "format ok (boxed, loose)"),
    ):
        verdict = FormatVerifier("boxed", strict=strict)(response=response)
        assert verdict.reason == reason, (strict, verdict)
        assert verdict.score == (1.0 if reason.startswith("format ok") else 0.0)


def test_failures_carry_a_flag_for_the_monitors():
    assert FormatVerifier("boxed")(response="\\boxed{4") == Verdict(0.0, "unclosed \\boxed{", ("unclosed",))
    assert FormatVerifier()(response="x" * 200_000).flags == ("too_long",)


def test_find_boxes_marks_unclosed_boxes():
    assert find_boxes("\\boxed{a} \\boxed{b") == [(0, 9, "a"), (10, None, "b")]


@given(
    st.text(st.characters(blacklist_characters="<>"), min_size=1).filter(lambda s: s.strip()),
    st.text(st.characters(blacklist_characters="<>"), min_size=1).filter(lambda s: s.strip()),
)
def test_any_filled_template_passes_strict(reasoning, answer):
    verdict = FormatVerifier("think_answer", strict=True)(
        response=f"<think>{reasoning}</think><answer>{answer}</answer>"
    )
    assert verdict.score == 1.0 or verdict.flags == ("echoed",)


def test_unknown_template_is_named():
    with pytest.raises(ValueError, match="unknown format template 'xml'"):
        FormatVerifier("xml")
    assert isinstance(VERIFIERS["format"](template="boxed"), FormatVerifier)
