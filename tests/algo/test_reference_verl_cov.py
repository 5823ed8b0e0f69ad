"""Differential tests of Clip-Cov and KL-Cov (Cui et al. 2025, arXiv:2505.22617) against verl's
`compute_policy_loss_clip_cov` / `_kl_cov`, on the float64 batch of test_reference_verl.py
(see there how verl is installed), within 1e-6, loss and d loss / d logp.

Mapping (rlvr ← verl), and where they differ:
    kl_cov_select + Objective(kl_cov), unclipped PG ← policy loss "kl_cov": verl selects with
        `torch.topk`, whose order among equal covariances is unspecified (it changes with the
        tensor's size); rlvr takes the earliest tokens (row-major) among ties. With verl's top-k
        made stable the two agree on a batch with a tie at the k-th place.
    clip_cov_select(clipped=ppo_clipped(...)) + Objective(clip_cov) ← policy loss "clip_cov":
        both leave out the tokens PPO has clipped (verl's `clip_by_origin`) and draw the subset
        with torch.randperm (same seed, same stream).
verl selects per micro-batch from the current log-probs; rlvr's training selects once a step
from pi_old (algo/entropy_control.py), which is where these tests hand it the current ones.
"""

from __future__ import annotations

import pytest
import torch

from rlvr.algo import Objective
from rlvr.algo.entropy_control import clip_cov_select, kl_cov_select, ppo_clipped
from tests.algo.test_reference_verl import EPS_HIGH, EPS_LOW, close, inputs, rlvr_with, verl

pytest.importorskip("verl.trainer.ppo.core_algos",
                    reason="verl is not installed (make install-dev installs requirements/verl-reference.txt)")
from verl.workers.config import ActorConfig  # noqa: E402
from verl.workers.config.actor import PolicyLossConfig  # noqa: E402

UNCLIPPED = {"eps_low": 1 - 1e-12, "eps_high": 1e12}  # ppo_clip with bounds no ratio reaches


def cov_actor(**policy_loss):
    return ActorConfig(strategy="fsdp", rollout_n=1, ppo_micro_batch_size_per_gpu=1, clip_ratio_low=EPS_LOW,
                       clip_ratio_high=EPS_HIGH, global_batch_info={},
                       policy_loss=PolicyLossConfig(**policy_loss))


@pytest.mark.parametrize("seed", [0, 1])
def test_kl_cov(seed):
    # verl's kl_cov: -A r on every token, + coef |log r| on the top cov_ratio tokens by
    # covariance of the *current* log-probs; rlvr's selection is given those log-probs here.
    logp, old, _, adv, mask = inputs(seed)
    select = kl_cov_select(adv, logp, mask, ratio=0.2)
    obj = Objective(aggregation="token_mean", surrogate_args=UNCLIPPED, entropy_control="kl_cov", kl_cov_coef=0.7)
    loss, grad, _ = rlvr_with(obj, logp, old, adv, mask, cov_select=select)
    vloss, vgrad, _ = verl("kl_cov", logp, old, adv, mask, "token-mean", cov_actor(kl_cov_ratio=0.2, ppo_kl_coef=0.7))
    assert 1 <= select.sum() < mask.sum()
    close(loss, vloss), close(grad, vgrad)


def tied_inputs():
    """The batch of seed 0 with rows 5 and 7 made equal where both are valid (4 tokens, same
    advantage 2.0, same log-probs): 4 pairs of tokens of equal covariance. Returns it with the
    ratio whose k cuts the first tied pair of the descending order in two (k-th place a tie)."""
    logp, old, ref, adv, mask = inputs(0)
    adv[5] = adv[7]
    logp[5, :4], old[5, :4] = logp[7, :4], old[7, :4]
    valid = mask.bool()
    cov = ((adv - adv[valid].mean()) * (logp - logp[valid].mean()))[valid].sort(descending=True).values
    k = next(i + 1 for i in range(len(cov) - 1) if cov[i] == cov[i + 1])
    return (logp, old, ref, adv, mask), (k + 0.5) / len(cov)


def stable_topk(values, k, largest=True, **_):
    order = torch.sort(values, descending=largest, stable=True).indices[:k]
    return torch.return_types.topk((values[order], order))


def test_kl_cov_ties_go_to_the_earliest_tokens_as_verl_with_a_stable_topk(monkeypatch):
    (logp, old, _, adv, mask), ratio = tied_inputs()
    select = kl_cov_select(adv, logp, mask, ratio=ratio)
    # the tied pair: row 5 and row 7 at one position; row 5's token comes first (row-major)
    pair = [(r, t) for t in range(4) for r in (5, 7) if select[5, t] != select[7, t]]
    assert pair and select[pair[0]] == 1 and select[pair[1]] == 0 and pair[0][0] == 5
    assert torch.equal(kl_cov_select(adv, logp, mask, ratio=ratio), select)  # repeatable
    obj = Objective(aggregation="token_mean", surrogate_args=UNCLIPPED, entropy_control="kl_cov", kl_cov_coef=0.7)
    loss, grad, _ = rlvr_with(obj, logp, old, adv, mask, cov_select=select)
    monkeypatch.setattr(torch, "topk", stable_topk)
    vloss, vgrad, _ = verl("kl_cov", logp, old, adv, mask, "token-mean",
                           cov_actor(kl_cov_ratio=ratio, ppo_kl_coef=0.7))
    close(loss, vloss), close(grad, vgrad)


@pytest.mark.parametrize("seed", [0, 1])
def test_clip_cov_on_policy(seed):
    # On-policy (the first update) no token is PPO-clipped, so verl's candidate set is rlvr's;
    # both draw the random subset with torch.randperm from a generator seeded 7.
    _, old, _, adv, mask = inputs(seed)
    select = clip_cov_select(adv, old, mask, ratio=0.1, low=0.05, high=5.0, generator=torch.Generator().manual_seed(7))
    obj = Objective(aggregation="token_mean", surrogate_args={"eps_low": EPS_LOW, "eps_high": EPS_HIGH},
                    entropy_control="clip_cov")
    loss, grad, _ = rlvr_with(obj, old, old, adv, mask, cov_select=select)
    torch.manual_seed(7)
    vloss, vgrad, _ = verl("clip_cov", old, old, adv, mask, "token-mean",
                           cov_actor(clip_cov_ratio=0.1, clip_cov_lb=0.05, clip_cov_ub=5.0))
    assert select.sum() >= 1
    close(loss, vloss), close(grad, vgrad)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_clip_cov_off_policy_leaves_out_the_clipped_tokens(seed):
    # Off-policy (logp 0.5 N(0, 1) from pi_old a token) PPO clips some in-band tokens; verl never
    # picks those. rlvr with `clipped` gives verl's loss; without it, another draw and loss.
    logp, old, _, adv, mask = inputs(seed)
    clipped = ppo_clipped(logp - old, adv, mask, EPS_LOW, EPS_HIGH)
    kw = dict(ratio=0.3, low=-5.0, high=5.0)
    select = clip_cov_select(adv, logp, mask, **kw, generator=torch.Generator().manual_seed(7), clipped=clipped)
    obj = Objective(aggregation="token_mean", surrogate_args={"eps_low": EPS_LOW, "eps_high": EPS_HIGH},
                    entropy_control="clip_cov")
    loss, grad, _ = rlvr_with(obj, logp, old, adv, mask, cov_select=select)
    torch.manual_seed(7)
    vloss, vgrad, _ = verl("clip_cov", logp, old, adv, mask, "token-mean",
                           cov_actor(clip_cov_ratio=0.3, clip_cov_lb=-5.0, clip_cov_ub=5.0))
    assert clipped.any() and select.sum() >= 1 and not (select.bool() & clipped).any()
    close(loss, vloss), close(grad, vgrad)
    naive = clip_cov_select(adv, logp, mask, **kw, generator=torch.Generator().manual_seed(7))
    naive_loss, _, _ = rlvr_with(obj, logp, old, adv, mask, cov_select=naive)
    assert abs(float(naive_loss - vloss)) > 1e-4


def test_objective_keeps_the_clipped_loss_of_a_selected_token_that_ppo_clipped():
    # A selection made at ratio 1 (nothing clipped) that PPO has clipped since: the token keeps
    # its clipped (constant) loss, as in verl, where it would never have been a candidate.
    logp, old, _, adv, mask = inputs(0)
    clipped = ppo_clipped(logp - old, adv, mask, EPS_LOW, EPS_HIGH)
    obj = Objective(aggregation="token_mean", surrogate_args={"eps_low": EPS_LOW, "eps_high": EPS_HIGH},
                    entropy_control="clip_cov")
    plain = Objective(aggregation="token_mean", surrogate_args={"eps_low": EPS_LOW, "eps_high": EPS_HIGH})
    loss_all, _, _ = rlvr_with(obj, logp, old, adv, mask, cov_select=clipped.double())
    loss_plain, _, _ = rlvr_with(plain, logp, old, adv, mask)
    assert clipped.any()
    close(loss_all, loss_plain)
