"""Score rollouts with the task's reward function, counting every failure.

A reward function is any callable `(response, gold) -> Verdict | float`, called as
`rlvr.rewards.calling` says (shared with evaluation, `rlvr verify` and `rlvr audit`): by
keyword `response=`, `gold=` when its parameters have those names (every built-in verifier
takes them keyword-only), positionally otherwise. One that also reads the prompt (a judge,
rules, a rubric with judge criteria, the probability reward) says so with a class or function
attribute `needs_prompt = True` and also gets `prompt=...`.
When it raises or returns a non-finite or out-of-range value, `on_error="fail"` stops the run
with one line that names the function and the sample, and `on_error="zero"` scores the sample 0
and counts it in `reward/errors`: a sample is never dropped without a counted metric.

A verdict that keeps per-part scores (a `CompositeVerdict`: rubric, rules, compositions) adds
`reward/component/<name>` to the counts as a `RunningMean`, the mean of that part's score over
the completions scored this step; it stays a mean when rounds of counts are summed (dynamic
sampling's refill) and becomes a plain float in the metrics line.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Callable

from rlvr import function_spec, heartbeat
from rlvr.config.schema import RewardSection
from rlvr.errors import ConfigError, RewardError
from rlvr.rewards import CompositeVerdict, Verdict
from rlvr.rewards.build import VERIFIER_OPTIONS, build_verifier
from rlvr.rewards.calling import describe_error, function_name
from rlvr.rewards.concurrent import SERIAL, Call, Concurrency, call_all
from rlvr.types import Rollout, Sample, Scored

# VERIFIER_OPTIONS is re-exported: the per-verifier settings live with the builder (rewards/build.py)
__all__ = ["VERIFIER_OPTIONS", "RunningMean", "build_reward_fn", "concurrency_of", "import_function", "score_groups",
           "score_one"]
RewardFn = Callable[[str, str], "Verdict | float"]


def build_reward_fn(section: RewardSection, policy=None) -> RewardFn:
    """The run's reward function. `policy` = (model, tokenizer) of the policy, needed by the
    probability reward (it scores with the current weights); the others ignore it.
    `components.build` passes the in-process engine's copy when there is one: it holds the
    weights that generated the batch and only the scoring thread touches it (in the async loop
    the trainer's model is being updated on another thread meanwhile)."""
    if section.function:
        return import_function(section.function)
    from rlvr.orchestrate.model_rewards import MODEL_REWARDS  # judges load torch models

    if section.verifier in MODEL_REWARDS:
        return MODEL_REWARDS[section.verifier](section, policy)
    try:
        return build_verifier(section.verifier, section)  # the builder of rlvr verify and audit too
    except ValueError as e:
        raise ConfigError(f"reward: {e}") from None


def import_function(spec: str) -> RewardFn:
    """`reward.function`'s function, or a ConfigError that says what is wrong."""
    return function_spec.import_function(spec, f"reward.function = {spec!r}")


def concurrency_of(section: RewardSection) -> Concurrency:
    """How a batch's reward calls are made (`reward.score_workers`, `score_pool`, `call_timeout_s`)."""
    return Concurrency(section.score_workers, section.score_pool, section.call_timeout_s)


def score_one(fn: RewardFn, sample: Sample, rollout: Rollout) -> Verdict:
    """Call the reward function once; raise RewardError on any failure."""
    (out, error), = call_all(fn, [_call(sample, rollout)], SERIAL)
    return checked(fn, sample, out, error)


def _call(sample: Sample, rollout: Rollout) -> Call:
    return rollout.text, sample.answer, sample.prompt, sample.extra


def checked(fn: RewardFn, sample: Sample, out: object, error: BaseException | None) -> Verdict:
    """The verdict of one call's outcome (rewards/concurrent.py), or RewardError naming the
    function and the sample. SystemExit too is an error: a reward calling sys.exit(0) would
    otherwise end the run with status 0 and no checkpoint."""
    name = function_name(fn)
    if error is not None:
        raise RewardError(f"reward function {name} raised {describe_error(error)} (sample {sample.source})")
    verdict = out if isinstance(out, Verdict) else Verdict(score=_as_float(out, name, sample), reason="")
    if not math.isfinite(verdict.score) or not 0.0 <= verdict.score <= 1.0:
        raise RewardError(f"reward function {name} returned {verdict.score} (not in [0, 1]) for sample {sample.source}")
    return verdict


def _as_float(out: object, name: str, sample: Sample) -> float:
    if isinstance(out, bool) or not isinstance(out, (int, float)):
        raise RewardError(f"reward function {name} returned {type(out).__name__}, expected a float or Verdict (sample {sample.source})")
    return float(out)


def score_groups(fn: RewardFn, samples: list[Sample], rollouts: list[list[Rollout]],
                 on_error: str, how: Concurrency = SERIAL) -> tuple[list[list[Scored]], Counter]:
    """Score every rollout, `how.workers` calls at once; returns the scored groups and the
    counts of errors and flags, with the per-component means of composite verdicts
    (`reward/component/<name>`). The same whatever `how` (the outcomes come back in order)."""
    pairs = [(sample, r) for sample, group in zip(samples, rollouts) for r in group]
    outcomes = iter(call_all(fn, [_call(s, r) for s, r in pairs], how, on_done=heartbeat.beat,
                             stop_at_error=on_error == "fail"))
    counts: Counter = Counter()
    groups = []
    for sample, group in zip(samples, rollouts):
        scored = []
        for r in group:
            try:
                v = checked(fn, sample, *next(outcomes))
            except RewardError as e:
                if on_error == "fail":
                    raise
                counts["reward/errors"] += 1
                v = Verdict(score=0.0, reason=f"error: {e}", flags=("error",))
            counts.update(f"reward/flag_{f}" for f in v.flags)
            if isinstance(v, CompositeVerdict):
                counts.update({f"reward/component/{n}": RunningMean(s, 1) for n, s in v.details})
            scored.append(Scored(sample=sample, rollout=r, reward=v.score, reason=v.reason, flags=v.flags))
        groups.append(scored)
    return groups, counts


@dataclass(frozen=True)
class RunningMean:
    """A mean that survives `Counter.update` (which adds values): sums add, `float` divides."""

    total: float
    n: int

    def __add__(self, other: RunningMean | int) -> RunningMean:
        if isinstance(other, RunningMean):
            return RunningMean(self.total + other.total, self.n + other.n)
        if other == 0:  # Counter.update adds to a missing key's 0
            return self
        return NotImplemented

    __radd__ = __add__

    def __float__(self) -> float:
        return self.total / self.n
