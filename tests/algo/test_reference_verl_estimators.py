"""Differential tests of the outcome estimators added after GRPO against verl 0.9.1's
`core_algos` (opo, grpo_passk, gpg), on the same float64 tensors, within 1e-6.

Mapping (rlvr ← verl), and where they differ:
    baseline length_weighted, scale none       ← opo (singletons: verl gives r_i, rlvr 0)
    baseline passk, scale group_std / none     ← grpo_passk, norm_adv_by_std_in_grpo True / False
                                                 (verl refuses groups of one; rlvr gives 0)
    baseline group_mean, scale gpg             ← gpg (f_norm = 1): verl's alpha = B / (rows with a
                                                 nonzero raw reward); rlvr's = B / (rows of groups
                                                 with some spread), the paper's B / (B - M). They
                                                 agree when exactly the rows with signal have
                                                 nonzero rewards; the case below where they do
                                                 not is asserted as a difference.
See tests/algo/test_reference_verl.py for how verl is installed (--no-deps) and the others.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rlvr.algo import outcome_advantages
from rlvr.algo.returns import outcome_token_rewards

core_algos = pytest.importorskip(
    "verl.trainer.ppo.core_algos",
    reason="verl is not installed (make install-dev installs requirements/verl-reference.txt)")
from verl.trainer.config import AlgoConfig  # noqa: E402

LENGTHS = torch.tensor([6, 3, 1, 5, 2, 4, 1, 6, 3, 3, 5, 2])
INDEX = np.arange(12) // 4  # three groups of four


def batch(rewards):
    mask = (torch.arange(6) < LENGTHS[:, None]).double()
    r = torch.tensor(rewards, dtype=torch.float64)
    return r, mask, outcome_token_rewards(r, mask)


def ours(r, mask, baseline, scale, eps=1e-6):
    return outcome_advantages(r, torch.as_tensor(INDEX), baseline=baseline, scale=scale, eps=eps,
                              lengths=mask.sum(1))[:, None] * mask


def close(a, b):
    torch.testing.assert_close(a.double(), b.double(), rtol=0, atol=1e-6)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_opo(seed):
    r, mask, tokens = batch(torch.rand(12, generator=torch.Generator().manual_seed(seed)).tolist())
    theirs, _ = core_algos.compute_opo_outcome_advantage(tokens, mask, INDEX)
    close(ours(r, mask, "length_weighted", "none"), theirs)


def test_opo_on_binary_rewards_with_a_zero_variance_group():
    r, mask, tokens = batch([1, 0, 0, 1, 1, 1, 1, 1, 0, 0, 1, 0])
    theirs, _ = core_algos.compute_opo_outcome_advantage(tokens, mask, INDEX)
    close(ours(r, mask, "length_weighted", "none"), theirs)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("scale, norm", [("group_std", True), ("none", False)])
def test_grpo_passk(seed, scale, norm):
    r, mask, tokens = batch(torch.rand(12, generator=torch.Generator().manual_seed(seed)).tolist())
    theirs, _ = core_algos.compute_grpo_passk_outcome_advantage(
        tokens, mask, INDEX, 1e-6, config=AlgoConfig(norm_adv_by_std_in_grpo=norm))
    mine = ours(r, mask, "passk", scale)
    assert (mine != 0).any(dim=1).sum() == 3  # one credited row a group
    close(mine, theirs)


def test_grpo_passk_ties_are_silent_in_both():
    r, mask, tokens = batch([1, 0, 1, 0, 1, 1, 1, 1, 0, 1, 0, 0])
    theirs, _ = core_algos.compute_grpo_passk_outcome_advantage(tokens, mask, INDEX, 1e-6, config=AlgoConfig())
    mine = ours(r, mask, "passk", "group_std")
    close(mine, theirs)
    assert mine[:8].abs().sum() == 0 and mine[9, 0] > 0  # groups 0, 1 tie; group 2's best is row 9


def test_gpg_where_the_two_counts_agree():
    # Nonzero rewards exactly on the rows of the groups with spread (group 1 is all zero).
    r, mask, tokens = batch([1, 2, 0.5, 3, 0, 0, 0, 0, 2, 1, 1, 1])
    theirs, _ = core_algos.compute_gpg_outcome_advantage(tokens, mask, INDEX)
    close(ours(r, mask, "group_mean", "gpg"), theirs)


def test_gpg_where_verl_counts_nonzero_rewards_instead():
    # Binary rewards: verl's m = 6 correct rows (alpha 2); the paper's B - M = 8 rows of the two
    # mixed groups (alpha 1.5); group 1 (all correct) has no signal in either.
    r, mask, tokens = batch([1, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0])
    theirs, _ = core_algos.compute_gpg_outcome_advantage(tokens, mask, INDEX)
    close(ours(r, mask, "group_mean", "gpg") * 2 / 1.5, theirs)
