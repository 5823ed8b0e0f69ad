"""Tests for rlvr.algo.filters: dynamic sampling keeps groups with 0 < accuracy < 1 (DAPO,
arXiv:2503.14476 §3.2), i.e. groups whose rewards are not all equal."""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.algo.advantages import outcome_advantages
from rlvr.algo.filters import nonzero_variance_groups


def test_hand_computed():
    # Group 0 [1, 0] mixed: kept. Group 1 [1, 1]: all right, dropped. Group 3 [0, 0, 0]: all
    # wrong, dropped. Group 4 [0.5] singleton: dropped. Group 2 does not occur.
    rewards = torch.tensor([1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.5, 0.0])
    group_ids = torch.tensor([0, 1, 0, 1, 3, 3, 4, 3])
    f = nonzero_variance_groups(rewards, group_ids)
    assert f.keep_groups.tolist() == [True, False, False, False, False]
    assert f.keep_rows.tolist() == [True, False, True, False, False, False, False, False]
    assert (f.kept.item(), f.dropped.item()) == (1, 3)


@settings(max_examples=50, deadline=None)
@given(data=st.lists(st.tuples(st.integers(0, 4), st.sampled_from([0.0, 0.5, 1.0])), min_size=1, max_size=20))
def test_kept_rows_are_exactly_those_with_nonzero_advantage_somewhere_in_their_group(data):
    group_ids = torch.tensor([g for g, _ in data])
    rewards = torch.tensor([r for _, r in data], dtype=torch.float64)
    f = nonzero_variance_groups(rewards, group_ids)
    adv = outcome_advantages(rewards, group_ids, baseline="group_mean", scale="group_std")
    for g in group_ids.unique():
        rows = group_ids == g
        assert bool(f.keep_rows[rows].all()) == bool(adv[rows].any())
        assert bool(f.keep_rows[rows].any()) == bool(f.keep_rows[rows].all())
    assert f.kept + f.dropped == len(group_ids.unique())


def test_rewards_that_differ_only_by_rounding_count_as_zero_variance():
    # 0.1 + 0.2 = 0.30000000000000004 in float64: the same reward as 0.3, rounded differently
    # (e.g. a rubric's weighted sum vs a verifier's constant). Group 0 [0.1 + 0.2, 0.3, 0.3]:
    # spread 5.6e-17 <= 1e-6, dropped. Group 1 [0.3, 0.3 + 2e-6]: spread 2e-6 > 1e-6, kept.
    # Group 2 [1/3 as float32, 1/3 as float64]: spread 9.9e-9 (float32 rounding), dropped.
    rewards = torch.tensor([0.1 + 0.2, 0.3, 0.3, 0.3, 0.3 + 2e-6,
                            float(torch.tensor(1 / 3, dtype=torch.float32)), 1 / 3], dtype=torch.float64)
    group_ids = torch.tensor([0, 0, 0, 1, 1, 2, 2])
    f = nonzero_variance_groups(rewards, group_ids)
    assert f.keep_groups.tolist() == [False, True, False]
    assert (f.kept.item(), f.dropped.item()) == (1, 2)


def test_atol_zero_compares_exactly():
    rewards = torch.tensor([0.1 + 0.2, 0.3], dtype=torch.float64)
    assert nonzero_variance_groups(rewards, torch.tensor([0, 0]), atol=0.0).keep_groups.tolist() == [True]
    assert nonzero_variance_groups(rewards, torch.tensor([0, 0])).keep_groups.tolist() == [False]


def test_dynamic_sampling_and_the_metric_use_the_same_tolerance():
    from collections import Counter

    from rlvr.config.schema import SamplingSection
    from rlvr.orchestrate.dynamic_sampling import select_groups
    from rlvr.orchestrate.step_metrics import rollout_metrics
    from rlvr.types import Rollout, Sample, Scored

    def group(*rewards):
        r = Rollout(prompt_ids=(1,), completion_ids=(2,), logprobs=(0.0,), text="x", finish_reason="stop")
        return [Scored(sample=Sample(prompt="p", answer="a"), rollout=r, reward=x, reason="") for x in rewards]

    rounded, mixed = group(0.1 + 0.2, 0.3), group(0.0, 1.0)
    kept, counts = select_groups(lambda n: ([rounded, mixed], Counter()),
                                 SamplingSection(prompts_per_step=2, zero_variance="drop"))
    assert kept == [mixed] and counts["groups/dropped"] == 1
    assert rollout_metrics([rounded, mixed])["groups/zero_variance_frac"] == 0.5
