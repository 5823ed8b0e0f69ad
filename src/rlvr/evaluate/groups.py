"""A prompt and its n graded samples: the unit every group-relative metric is computed on.

Samples come either from an engine (`grade_rollouts`) or from a jsonl file of outputs made by
any system (`rlvr.evaluate.samples_file.load_samples`); both end up as `PromptGroup`s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from rlvr.evaluate.vote import answer_key
from rlvr.rewards.calling import score_of
from rlvr.rewards.concurrent import SERIAL, Concurrency, call_all_checked
from rlvr.rewards.math.verifier import extract_answer
from rlvr.types import Rollout, Sample

Verify = Callable[[str, str], "object"]  # (response, gold) -> Verdict with .score


@dataclass(frozen=True)
class Graded:
    """One sample of a prompt after grading.

    score: the verifier's score in [0, 1]; correct means score >= 1.
    answer: the extracted final answer (None: none found); key: its voting key (see vote.py).
    mean_logprob: mean log-prob of the completion tokens under the sampling distribution,
        None when unknown (samples from a file without a "logprob" field).
    """

    response: str
    score: float
    answer: str | None
    key: str | None
    mean_logprob: float | None = None
    reason: str = ""


@dataclass(frozen=True)
class PromptGroup:
    """The n graded samples of one prompt, in sampling order."""

    prompt: str
    gold: str
    source: str
    members: tuple[Graded, ...]

    @property
    def n(self) -> int:
        return len(self.members)

    @property
    def correct(self) -> int:
        return sum(m.score >= 1.0 for m in self.members)

    @property
    def pass_rate(self) -> float:
        return self.correct / self.n


def grade(response: str, gold: str, verify: Verify, extract: tuple[str, ...],
          mean_logprob: float | None = None, sample: Sample | None = None) -> Graded:
    """Score one response with the verifier (or a reward function returning a Verdict or a
    number) and extract its answer for voting. With `sample`, the function is called as in
    training: its prompt, and its extra columns by parameter name (rewards/calling.py)."""
    prompt, extra = (sample.prompt, sample.extra) if sample is not None else ("", None)
    where = f"sample {sample.source}" if sample is not None else ""
    verdict, = call_all_checked(verify, [(response, gold, prompt, extra)], SERIAL, [where])
    return graded(response, verdict, extract, mean_logprob)


def graded(response: str, verdict: object, extract: tuple[str, ...], mean_logprob: float | None) -> Graded:
    """A response with what its reward call returned, and its extracted answer for voting."""
    found = extract_answer(response, extract)
    answer = found[1] if found is not None else None
    return Graded(response=response, score=float(score_of(verdict)), answer=answer, key=answer_key(answer),
                  mean_logprob=mean_logprob, reason=getattr(verdict, "reason", ""))


def mean_logprob(rollout: Rollout) -> float:
    """Mean of the rollout's token log-probs (T,) → float; -inf for an empty completion."""
    return float(np.mean(rollout.logprobs)) if rollout.logprobs else float("-inf")


def verdicts_of(samples: Sequence[Sample], rollouts: Sequence[Sequence[Rollout]], verify: Verify,
                how: Concurrency = SERIAL) -> list[object]:
    """What `verify` returned for each rollout, flattened in order (P x n), the calls
    `how.workers` at once (`reward.score_workers`, as in training; an `async def` function is
    awaited); a scorer that raises or exits is one RewardError naming the sample's source."""
    pairs = [(s, r) for s, group in zip(samples, rollouts) for r in group]
    return call_all_checked(verify, [(r.text, s.answer, s.prompt, s.extra) for s, r in pairs], how,
                            [f"sample {s.source}" for s, _ in pairs])


def grade_rollouts(samples: Sequence[Sample], rollouts: Sequence[Sequence[Rollout]], verify: Verify,
                   extract: tuple[str, ...], how: Concurrency = SERIAL) -> list[PromptGroup]:
    """Engine output (P lists of n rollouts) → P graded groups (scored by `verdicts_of`)."""
    verdicts = iter(verdicts_of(samples, rollouts, verify, how))
    return [PromptGroup(prompt=s.prompt, gold=s.answer, source=s.source,
                        members=tuple(graded(r.text, next(verdicts), extract, mean_logprob(r)) for r in group))
            for s, group in zip(samples, rollouts)]


def counts(groups: Sequence[PromptGroup]) -> tuple[np.ndarray, np.ndarray]:
    """(n (P,), c (P,)) integer arrays: samples and correct samples of each prompt."""
    return (np.array([g.n for g in groups], dtype=np.int64),
            np.array([g.correct for g in groups], dtype=np.int64))
