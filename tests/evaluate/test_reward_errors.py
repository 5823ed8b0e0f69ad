"""Evaluation calls a user's reward function without training's `reward.on_error` policy: what the
function raises, `sys.exit(0)` included, must end the command with one line naming the function and
the sample, never a traceback and never an exit with status 0 (issue 26)."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest

from rlvr.errors import RewardError
from rlvr.evaluate.accuracy import greedy_accuracy
from rlvr.evaluate.groups import grade
from rlvr.types import Sample


def exits_with_success(response, gold):
    sys.exit(0)


def divides_by_zero(response, gold):
    return 1 / 0


class OneReply:
    """An engine that answers every prompt with the same text."""

    def generate(self, prompts, n, params):
        return [[SimpleNamespace(text="42")] * n for _ in prompts]


SAMPLES = [Sample(prompt="6*7=", answer="42", source="test.jsonl:3")]


@pytest.mark.parametrize("fn, said", [(exits_with_success, "SystemExit(0) (sys.exit is not a way to return a score)"),
                                      (divides_by_zero, "ZeroDivisionError: division by zero")])
def test_greedy_accuracy_names_the_function_and_the_sample(fn, said):
    with pytest.raises(RewardError) as raised:  # before: SystemExit escaped and the command exited 0
        greedy_accuracy(OneReply(), SAMPLES, fn, max_new_tokens=4)
    assert str(raised.value) == f"reward function {__name__}.{fn.__qualname__} raised {said} (sample test.jsonl:3)"


def test_grading_a_group_names_the_function_and_the_sample():
    with pytest.raises(RewardError, match=r"exits_with_success raised SystemExit\(0\).*\(sample test.jsonl:3\)"):
        grade("42", "42", exits_with_success, (), sample=SAMPLES[0])


def test_a_reward_error_of_the_verifier_itself_passes_through_unchanged():
    def rejects(response, gold):
        raise RewardError("gold 'x' is not an answer")

    with pytest.raises(RewardError) as raised:
        grade("42", "x", rejects, ())
    assert str(raised.value) == "gold 'x' is not an answer"
