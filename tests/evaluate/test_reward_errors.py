"""Evaluation calls a user's reward function as training does, without training's
`reward.on_error` policy: what the function raises, `sys.exit(0)` included, must end the command
with one line naming the function and the sample, never a traceback and never an exit with
status 0 (issue 26); `async def` functions and `reward.score_workers` work as in training."""

from __future__ import annotations

import sys
import asyncio
import time

import pytest

from rlvr.errors import RewardError
from rlvr.evaluate.accuracy import greedy_accuracy
from rlvr.evaluate.groups import grade
from rlvr.rewards.concurrent import Concurrency
from rlvr.types import Rollout, Sample


def exits_with_success(response, gold):
    sys.exit(0)


def divides_by_zero(response, gold):
    return 1 / 0


class Replies:
    """An engine that answers prompt i with `texts[i]`, n times."""

    def __init__(self, texts=("42",)):
        self.texts = texts

    def generate(self, prompts, n, params):
        return [[Rollout((), (), (), self.texts[i % len(self.texts)], "stop")] * n for i in range(len(prompts))]


SAMPLES = [Sample(prompt="6*7=", answer="42", source="test.jsonl:3")]


@pytest.mark.parametrize("fn, said", [(exits_with_success, "SystemExit(0) (sys.exit is not a way to return a score)"),
                                      (divides_by_zero, "ZeroDivisionError: division by zero")])
def test_greedy_accuracy_names_the_function_and_the_sample(fn, said):
    with pytest.raises(RewardError) as raised:  # before: SystemExit escaped and the command exited 0
        greedy_accuracy(Replies(), SAMPLES, fn, max_new_tokens=4)
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


async def awaited_exact(response, gold):
    await asyncio.sleep(0)
    return float(response == gold)


def slow_exact(response, gold):
    time.sleep(0.05 * (int(gold) % 3))  # later calls may finish first: the order must hold anyway
    return float(response == gold)


def test_an_async_reward_function_is_awaited_in_evaluation():
    # before: the coroutine reached float() and the eval crashed with a TypeError
    samples = [Sample(prompt=f"{i}=", answer=str(i), source=f"t:{i}") for i in range(4)]
    assert greedy_accuracy(Replies(("0", "9", "2", "3")), samples, awaited_exact, max_new_tokens=2) == 0.75


def test_concurrent_scoring_gives_the_serial_scores_in_order():
    samples = [Sample(prompt=f"{i}=", answer=str(i), source=f"t:{i}") for i in range(6)]
    engine = Replies(("0", "x", "2", "x", "4", "5"))
    serial = greedy_accuracy(engine, samples, slow_exact, max_new_tokens=2)
    threads = greedy_accuracy(engine, samples, slow_exact, max_new_tokens=2, how=Concurrency(workers=4))
    assert serial == threads == 4 / 6
