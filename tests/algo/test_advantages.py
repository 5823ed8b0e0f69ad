"""Tests for rlvr.algo.advantages: GRPO / Dr. GRPO / ScaleRL outcome advantages.

GRPO (arXiv:2402.03300, eq. 3 with outcome supervision): A_i = (r_i - mean_g(r)) / (std_g(r) + eps),
std the unbiased sample std (n - 1). Dr. GRPO (arXiv:2503.20783) drops the division; ScaleRL
(arXiv:2510.13786) divides by the std of the centred batch.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.algo.advantages import SCALES, outcome_advantages

FAST = settings(max_examples=50, deadline=None)
EPS = 1e-4


def adv_of(rewards, group_ids, scale, eps=EPS, dtype=torch.float64):
    return outcome_advantages(
        torch.tensor(rewards, dtype=dtype), torch.tensor(group_ids), baseline="group_mean", scale=scale, eps=eps
    )


def loop_advantages(rewards: list[float], group_ids: list[int], scale: str, eps: float) -> list[float]:
    """The textbook formulas written as a loop over groups, with exact (fsum) means."""
    groups: dict[int, list[float]] = defaultdict(list)
    for r, g in zip(rewards, group_ids):
        groups[g].append(r)
    centred = [r - statistics.fmean(groups[g]) for r, g in zip(rewards, group_ids)]
    if scale == "none":
        return centred
    if scale == "group_std":
        stds = {g: statistics.stdev(rs) if len(rs) > 1 else 0.0 for g, rs in groups.items()}
        return [c / (stds[g] + eps) for c, g in zip(centred, group_ids)]
    if scale == "batch_std":
        std = statistics.stdev(centred) if len(centred) > 1 else 0.0
        return [c / (std + eps) for c in centred]
    if scale == "batch_std_raw":
        std = statistics.stdev(rewards) if len(rewards) > 1 else 0.0
        return [c / (std + eps) for c in centred]
    if scale == "gpg":  # B / (rows of the groups whose rewards are not all equal)
        valid = sum(1 for g in group_ids if len(set(groups[g])) > 1)
        return [c * len(rewards) / valid if valid else c for c in centred]
    raise AssertionError(f"no reference for scale {scale!r}; add one here")


reward_values = st.floats(min_value=-10, max_value=10, allow_nan=False, allow_infinity=False)


@st.composite
def grouped_rewards(draw, values=reward_values):
    """Rewards (list) and group ids (list) with groups of 1..5 rows, rows in any order."""
    sizes = draw(st.lists(st.integers(1, 5), min_size=1, max_size=4))
    group_ids = [g for g, n in enumerate(sizes) for _ in range(n)]
    order = draw(st.permutations(range(len(group_ids))))
    rewards = draw(st.lists(values, min_size=len(group_ids), max_size=len(group_ids)))
    return rewards, [group_ids[i] for i in order]


# --- hand-computed cases ---------------------------------------------------------------------


def test_grpo_hand_computed():
    # Group 0 rewards [1, 0, 0, 1]: mean 0.5, centred [+.5, -.5, -.5, +.5],
    # unbiased var = (4 * 0.25) / (4 - 1) = 1/3, std = 0.5773502691896258,
    # A = +-0.5 / (0.5773502691896258 + 1e-4) = +-0.8658754297607014   (eq. 3).
    # (The biased std 0.5 would give 0.9998000399920016 instead.)
    # Group 1 rewards [1, 1, 1, 1]: centred all 0, so A = 0.
    a = 0.8658754297607014
    adv = adv_of([1, 0, 0, 1, 1, 1, 1, 1], [0, 0, 0, 0, 1, 1, 1, 1], "group_std")
    expected = torch.tensor([a, -a, -a, a, 0, 0, 0, 0], dtype=torch.float64)
    torch.testing.assert_close(adv, expected, rtol=1e-12, atol=0)


def test_default_eps_is_1e_4():
    rewards, group_ids = torch.tensor([1.0, 0.0]), torch.tensor([0, 0])
    # std of [1, 0] is sqrt(0.5) = 0.7071067811865476; A = 0.5 / (0.7071067811865476 + 1e-4)
    adv = outcome_advantages(rewards, group_ids, baseline="group_mean", scale="group_std")
    assert adv[0].item() == pytest.approx(0.5 / (math.sqrt(0.5) + 1e-4), rel=1e-6)


def test_batch_std_hand_computed():
    # Centred batch [+.5, -.5, -.5, +.5, 0, 0, 0, 0]: mean 0, sum of squares 1,
    # unbiased var = 1 / 7, std = 0.3779644730092272,
    # A = +-0.5 / (0.3779644730092272 + 1e-4) = +-1.3225257481090977   (ScaleRL batch norm).
    a = 1.3225257481090977
    adv = adv_of([1, 0, 0, 1, 1, 1, 1, 1], [0, 0, 0, 0, 1, 1, 1, 1], "batch_std")
    expected = torch.tensor([a, -a, -a, a, 0, 0, 0, 0], dtype=torch.float64)
    torch.testing.assert_close(adv, expected, rtol=1e-12, atol=0)


def test_batch_std_raw_hand_computed():
    # TRL scale_rewards = "batch": the std of the raw rewards [1, 0, 0, 1, 1, 1, 1, 1]: mean
    # 0.75, sum of squares 2 * 0.5625 + 6 * 0.0625 = 1.5, unbiased var = 1.5 / 7 = 0.2142857...,
    # std = 0.4629100498862757; A = +-0.5 / (0.4629100498862757 + 1e-4) = +-1.0798901667961847.
    # (The centred batch std of test_batch_std_hand_computed gives 1.3225 instead.)
    a = 1.0798901667961847
    adv = adv_of([1, 0, 0, 1, 1, 1, 1, 1], [0, 0, 0, 0, 1, 1, 1, 1], "batch_std_raw")
    expected = torch.tensor([a, -a, -a, a, 0, 0, 0, 0], dtype=torch.float64)
    torch.testing.assert_close(adv, expected, rtol=1e-12, atol=0)


def test_no_scale_hand_computed():
    # Dr. GRPO: A = r - mean_g(r). Group 0 [3, 1] has mean 2 -> [1, -1]; group 1 [5] -> [0].
    adv = adv_of([3, 5, 1], [0, 1, 0], "none")
    assert adv.tolist() == [1.0, 0.0, -1.0]


@pytest.mark.parametrize("scale", sorted(SCALES))
def test_zero_variance_group_is_exactly_zero(scale):
    adv = adv_of([1, 0, 0.5, 0.5, 0.5], [0, 0, 1, 1, 1], scale, dtype=torch.float32)
    assert not adv.isnan().any()
    assert adv[2:].tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("scale", sorted(SCALES))
def test_singleton_group_is_zero(scale):
    assert adv_of([7.0], [0], scale).tolist() == [0.0]
    adv = adv_of([1.0, 0.0, 7.0], [0, 0, 1], scale)
    assert adv[2].item() == 0.0
    assert not adv.isnan().any()


def test_zero_variance_group_is_exactly_zero_in_float64():
    adv = adv_of([0.1, 0.1, 0.1], [0, 0, 0], "group_std", dtype=torch.float64)
    assert adv.tolist() == [0.0, 0.0, 0.0]


def test_zero_variance_group_with_eps_zero_is_not_nan():
    adv = adv_of([1.0, 1.0, 1.0, 0.0], [0, 0, 1, 1], "group_std", eps=0.0)
    assert adv[:2].tolist() == [0.0, 0.0]


# --- invariants --------------------------------------------------------------------------------


@FAST
@given(data=grouped_rewards(), scale=st.sampled_from(sorted(SCALES)))
def test_loop_equals_vectorised(data, scale):
    rewards, group_ids = data
    expected = torch.tensor(loop_advantages(rewards, group_ids, scale, EPS), dtype=torch.float64)
    torch.testing.assert_close(adv_of(rewards, group_ids, scale), expected, rtol=1e-9, atol=1e-9)


@FAST
@given(data=grouped_rewards(), scale=st.sampled_from(sorted(SCALES)))
def test_group_advantages_sum_to_zero(data, scale):
    rewards, group_ids = data
    adv, ids = adv_of(rewards, group_ids, scale), torch.tensor(group_ids)
    for g in ids.unique():
        assert abs(adv[ids == g].sum().item()) < 1e-8


@FAST
@given(data=grouped_rewards())
def test_no_scale_is_reward_minus_group_mean(data):
    rewards, group_ids = data
    r, ids = torch.tensor(rewards, dtype=torch.float64), torch.tensor(group_ids)
    means = torch.stack([r[ids == g].mean() for g in group_ids])
    torch.testing.assert_close(adv_of(rewards, group_ids, "none"), r - means, rtol=1e-12, atol=1e-12)


@FAST
@given(data=grouped_rewards())
def test_batch_std_divides_centred_rewards_by_their_std(data):
    rewards, group_ids = data
    centred = adv_of(rewards, group_ids, "none")
    std = centred.std() if len(rewards) > 1 else torch.tensor(0.0, dtype=torch.float64)
    torch.testing.assert_close(adv_of(rewards, group_ids, "batch_std"), centred / (std + EPS))


@FAST
@given(data=grouped_rewards(), scale=st.sampled_from(sorted(SCALES)), seed=st.integers(0, 2**16))
def test_permuting_rows_permutes_advantages(data, scale, seed):
    # Sorted, interleaved or shuffled group ids: every row gets the same advantage.
    rewards, group_ids = data
    perm = torch.randperm(len(rewards), generator=torch.Generator().manual_seed(seed))
    adv = adv_of(rewards, group_ids, scale)
    permuted = adv_of([rewards[i] for i in perm], [group_ids[i] for i in perm], scale)
    torch.testing.assert_close(permuted, adv[perm], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("scale", sorted(SCALES))
def test_interleaved_group_ids_match_sorted(scale):
    sorted_adv = adv_of([1, 0, 0, 1, 1, 1, 0, 0], [0, 0, 0, 0, 1, 1, 1, 1], scale)
    # the same rows, dealt out as 0,1,0,1,...
    interleaved = adv_of([1, 1, 0, 1, 0, 0, 1, 0], [0, 1, 0, 1, 0, 1, 0, 1], scale)
    torch.testing.assert_close(interleaved, sorted_adv[[0, 4, 1, 5, 2, 6, 3, 7]], rtol=1e-12, atol=0)


@FAST
@given(data=grouped_rewards(), scale=st.sampled_from(sorted(SCALES)), labels=st.permutations(range(12)))
def test_group_ids_are_only_labels(data, scale, labels):
    # Renaming the groups, with gaps between the ids, changes nothing.
    rewards, group_ids = data
    renamed = [labels[g] for g in group_ids]
    torch.testing.assert_close(adv_of(rewards, renamed, scale), adv_of(rewards, group_ids, scale))


@FAST
@given(
    data=grouped_rewards(st.floats(min_value=-1e3, max_value=1e3, width=32)),
    constant=st.floats(min_value=-1e3, max_value=1e3, width=32),
    size=st.integers(1, 6),
    scale=st.sampled_from(sorted(SCALES)),
)
def test_constant_group_gives_exact_zeros_float32(data, constant, size, scale):
    rewards, group_ids = data
    new_group = max(group_ids) + 1
    adv = adv_of(rewards + [constant] * size, group_ids + [new_group] * size, scale, dtype=torch.float32)
    assert not adv.isnan().any()
    assert adv[-size:].tolist() == [0.0] * size


# --- RLOO and no baseline (arXiv:2402.14740 eq. 6; REINFORCE++ arXiv:2501.03262) ----------------


def rloo_of(rewards, group_ids, dtype=torch.float64):
    r, ids = torch.tensor(rewards, dtype=dtype), torch.tensor(group_ids)
    return outcome_advantages(r, ids, baseline="rloo", scale="none")


def test_rloo_hand_computed():
    # Group 0 [1, 0, 0, 1]: A_0 = 1 - (0 + 0 + 1)/3 = 2/3, A_1 = 0 - (1 + 0 + 1)/3 = -2/3.
    # Group 1 [3, 5]: A = 3 - 5 = -2 and 5 - 3 = +2. Group 2 [7] (singleton): 0.
    adv = rloo_of([1, 0, 0, 1, 3, 5, 7], [0, 0, 0, 0, 1, 1, 2])
    expected = torch.tensor([2 / 3, -2 / 3, -2 / 3, 2 / 3, -2.0, 2.0, 0.0], dtype=torch.float64)
    torch.testing.assert_close(adv, expected, rtol=1e-12, atol=1e-15)


@FAST
@given(data=grouped_rewards())
def test_rloo_equals_leave_one_out_loop(data):
    rewards, group_ids = data
    expected = []
    for i, (r, g) in enumerate(zip(rewards, group_ids)):
        others = [rj for j, (rj, gj) in enumerate(zip(rewards, group_ids)) if gj == g and j != i]
        expected.append(r - statistics.fmean(others) if others else 0.0)
    torch.testing.assert_close(rloo_of(rewards, group_ids), torch.tensor(expected, dtype=torch.float64),
                               rtol=1e-9, atol=1e-9)


@FAST
@given(data=grouped_rewards(st.floats(min_value=-1e3, max_value=1e3, width=32)),
       constant=st.floats(min_value=-1e3, max_value=1e3, width=32))
def test_rloo_zero_variance_group_is_exactly_zero(data, constant):
    rewards, group_ids = data
    new = max(group_ids) + 1
    adv = rloo_of(rewards + [constant] * 3, group_ids + [new] * 3, dtype=torch.float32)
    assert adv[-3:].tolist() == [0.0, 0.0, 0.0]


def test_no_baseline_keeps_rewards():
    adv = outcome_advantages(torch.tensor([1.0, 0.0, 0.5]), torch.tensor([0, 0, 1]), baseline="none", scale="none")
    assert adv.tolist() == [1.0, 0.0, 0.5]
