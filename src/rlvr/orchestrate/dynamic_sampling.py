"""Which groups a step trains on: zero-variance filtering with refill (DAPO), and the
no-positive-resampling curriculum (ScaleRL: a prompt whose pass rate reaches 0.9 is retired).

Nothing is dropped silently: every dropped group, extra generation round and retired prompt
is counted in the step's metrics (docs/metrics.md).
"""

from __future__ import annotations

from collections import Counter
from typing import Callable

import torch

from rlvr.algo.curriculum import PassRateTracker
from rlvr.algo.filters import nonzero_variance_groups
from rlvr.config.schema import SamplingSection
from rlvr.types import Scored

Generate = Callable[[int], tuple[list[list[Scored]], Counter]]  # n prompts → scored groups


def with_variance(groups: list[list[Scored]]) -> list[list[Scored]]:
    """The groups whose rewards are not all equal up to rounding (`ZERO_VARIANCE_ATOL`): they
    carry a group-relative signal."""
    rewards = torch.tensor([s.reward for g in groups for s in g], dtype=torch.float64)
    ids = torch.tensor([i for i, g in enumerate(groups) for _ in g])
    keep = nonzero_variance_groups(rewards, ids).keep_groups
    return [g for i, g in enumerate(groups) if bool(keep[i])]


def select_groups(generate: Generate, s: SamplingSection) -> tuple[list[list[Scored]], Counter]:
    """Generate a step's groups and apply `sampling.zero_variance`:
    keep: all groups; drop: only those with variance; refill: generate more rounds (at most
    `max_refill_rounds`) until `prompts_per_step` groups with variance are found.
    If no group has variance at all, the step trains on all of them (their advantages are 0)
    and `groups/all_zero_variance` says so."""
    groups, counts = generate(s.prompts_per_step)
    if s.zero_variance == "keep":
        return groups, counts
    kept = with_variance(groups)
    counts["groups/dropped"] += len(groups) - len(kept)
    rounds = 0
    while s.zero_variance == "refill" and len(kept) < s.prompts_per_step and rounds < s.max_refill_rounds:
        rounds += 1
        more, more_counts = generate(s.prompts_per_step)
        counts.update(more_counts)
        good = with_variance(more)
        counts["groups/dropped"] += len(more) - len(good)
        kept += good
    counts["sampling/extra_rounds"] += rounds
    if not kept:
        counts["groups/all_zero_variance"] += 1
        return groups, counts
    return kept[: s.prompts_per_step], counts


def update_curriculum(tracker: PassRateTracker | None, groups: list[list[Scored]], counts: Counter) -> None:
    """Record each prompt's pass rate; count the prompts retired by this batch."""
    if tracker is None:
        return
    for g in groups:
        counts["curriculum/retired_now"] += int(tracker.update(g[0].sample.prompt, [s.reward for s in g]))
