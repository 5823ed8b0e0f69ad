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
