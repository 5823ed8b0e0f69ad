"""Differential tests against verl's `verl.trainer.ppo.core_algos`, called directly on the same
float64 tensors: losses, advantages and d loss / d logp must agree within 1e-6.

verl is not in the `dev` extra: its declared requirements pin transformers < 5.11 (this project
runs 5.2x) and pull ~750 MB. `make install-dev` installs it with --no-deps instead, with the
six small packages `core_algos` imports (requirements/verl-reference.txt), so these tests run
in CI. They skip, saying so, where verl is absent.

Mapping (rlvr ← verl), and where they differ:
    AGGREGATIONS token_mean / seq_mean_token_mean / seq_mean_token_sum_norm(C)
        ← agg_loss "token-mean" / "seq-mean-token-mean" / "seq-mean-token-sum-norm" with
          loss_scale_factor = C (verl's default divides by the padded width instead).
          Fully masked rows are excluded by both.
    dual_clip(c)            ← policy loss "vanilla" (verl always applies the dual clip, c = 3 by
                              default; rlvr's ppo_clip is vanilla with c = infinity)
    sequence_token + ppo_clip ← policy loss "gspo" (verl's GSPO is GSPO-token)
    cispo                   ← policy loss "cispo" (verl multiplies log pi: the losses differ by
                              sg(w) A log pi_old, which has no gradient)
    sapo(tau_pos, tau_neg)  ← policy loss "sapo" (verl always aggregates it seq-mean-token-mean)
    gmpo + seq_mean_token_mean ← policy loss "geo_mean" (verl averages over all rows, empty ones
                              included, and adds 1e-8 to lengths: equal without empty rows)
    token_sum               ← agg_loss "token-sum"
    seq_mean_token_sum_norm, C = 1 ← agg_loss "seq-mean-token-sum"
    dppo_tv / dppo_kl (eps_low, eps_high, clip_c) ← policy loss "dppo_tv" / "dppo_kl" (thresholds
                              from clip_ratio_low / _high, the IS cap from clip_ratio_c; verl
                              multiplies log pi: losses differ by sg(w) A log pi_old)
    kl_estimate k1 / k2 / k3 with clamp 10 / abs ← kl_penalty "k1" / "k2" / "low_var_kl" / "abs",
      and k1_plus / k3_plus (clamp 10) / abs_plus ← "k1+" / "k3+", "low_var_kl+" / "abs+"
    clipped_value_loss      ← compute_value_loss
    outcome_advantages      ← grpo / rloo estimators; singleton groups differ: verl gives r_i
                              (mean 0, std 1), rlvr gives 0 (no baseline but itself)
    reinforce_pp_advantages ← reinforce_plus_plus (gamma) / reinforce_plus_plus_baseline
    gae_advantages + masked_whiten ← gae (verl whitens the advantages over the batch)
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rlvr.algo import AGGREGATIONS, Objective, masked_whiten, outcome_advantages, reinforce_pp_advantages
from rlvr.algo.gae import gae_advantages
from rlvr.algo.kl import kl_estimate
from rlvr.algo.returns import outcome_token_rewards
from rlvr.algo.value import clipped_value_loss
from rlvr.types import Batch

core_algos = pytest.importorskip(
    "verl.trainer.ppo.core_algos",
    reason="verl is not installed (make install-dev installs requirements/verl-reference.txt)")
from verl.trainer.config import AlgoConfig  # noqa: E402
from verl.workers.config import ActorConfig  # noqa: E402

EPS_LOW, EPS_HIGH, T, C = 0.2, 0.28, 6, 8.0
MODES = {"token_mean": "token-mean", "seq_mean_token_mean": "seq-mean-token-mean",
         "seq_mean_token_sum_norm": "seq-mean-token-sum-norm"}


def inputs(seed: int):
    """Ragged float64 batch with an empty row (row 2), groups of 2 (row 2's partner zero-variance)."""
    gen = torch.Generator().manual_seed(seed)
    lengths = torch.tensor([6, 3, 0, 5, 2, 4, 1, 6])
    b = len(lengths)
    mask = (torch.arange(T) < lengths[:, None]).double()
    old = -2 * torch.rand(b, T, generator=gen, dtype=torch.float64) * mask
    logp = (old + 0.5 * torch.randn(b, T, generator=gen, dtype=torch.float64)) * mask
    ref = (old + 0.3 * torch.randn(b, T, generator=gen, dtype=torch.float64)) * mask
    adv = torch.tensor([1.2, -0.7, 0.0, -1.5, 0.9, 0.3, -0.4, 2.0], dtype=torch.float64)[:, None] * mask
    return logp, old, ref, adv, mask


def actor(c=3.0):
    # The policy losses read the Dr. GRPO constant from global_batch_info (the worker fills it).
    return ActorConfig(strategy="fsdp", rollout_n=1, ppo_micro_batch_size_per_gpu=1, clip_ratio_low=EPS_LOW,
                       clip_ratio_high=EPS_HIGH, clip_ratio_c=c, global_batch_info={"loss_scale_factor": C})


def rlvr(objective: Objective, logp, old, adv, mask):
    b = mask.shape[0]
    batch = Batch(input_ids=torch.zeros(b, 1 + T, dtype=torch.long),
                  attention_mask=torch.ones(b, 1 + T, dtype=torch.long),
                  completion_mask=mask, old_logp=old, adv=adv, group_ids=torch.arange(b) // 2)
    x = logp.clone().requires_grad_()
    loss, metrics = objective.loss(x, batch, objective.weights(mask, batch.group_ids))
    loss.backward()
    return loss.detach(), x.grad, metrics


def verl(name, logp, old, adv, mask, mode, config):
    x = logp.clone().requires_grad_()
    loss, metrics = core_algos.get_policy_loss_fn(name)(old, x, adv, mask, loss_agg_mode=mode, config=config)
    loss.backward()
    return loss.detach(), x.grad, metrics


def close(a, b, atol=1e-6):
    torch.testing.assert_close(torch.as_tensor(a, dtype=torch.float64), torch.as_tensor(b, dtype=torch.float64),
                               rtol=0, atol=atol)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("mode", sorted(MODES))
def test_agg_loss(mode, seed):
    logp, _, _, _, mask = inputs(seed)
    ours = (AGGREGATIONS[mode](mask, torch.arange(mask.shape[0]) // 2, C) * logp).sum()
    close(ours, core_algos.agg_loss(logp, mask, MODES[mode], loss_scale_factor=C))


@pytest.mark.parametrize("seed", [0, 1])
def test_seq_mean_token_sum_is_the_sum_norm_with_c_1(seed):
    # verl's "seq-mean-token-sum" (no normaliser) is rlvr's seq_mean_token_sum_norm at C = 1.
    logp, _, _, _, mask = inputs(seed)
    ours = (AGGREGATIONS["seq_mean_token_sum_norm"](mask, torch.arange(mask.shape[0]) // 2, 1.0) * logp).sum()
    close(ours, core_algos.agg_loss(logp, mask, "seq-mean-token-sum"))


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("c", [1.5, 3.0])
def test_vanilla_is_dual_clip(mode, c, seed):
    logp, old, _, adv, mask = inputs(seed)
    obj = Objective(surrogate="dual_clip", aggregation=mode, aggregation_constant=C,
                    surrogate_args={"eps_low": EPS_LOW, "eps_high": EPS_HIGH, "clip_c": c})
    loss, grad, m = rlvr(obj, logp, old, adv, mask)
    vloss, vgrad, vm = verl("vanilla", logp, old, adv, mask, MODES[mode], actor(c))
    close(loss, vloss), close(grad, vgrad)
    if mode == "token_mean":  # verl's clip fractions are token means
        close(m["policy/clip_low_frac"] + m["policy/clip_high_frac"], vm["actor/pg_clipfrac"])
        close(m["policy/clip_dual_frac"], vm["actor/pg_clipfrac_lower"])


@pytest.mark.parametrize("seed", [0, 1])
def test_ppo_clip_is_vanilla_with_an_unreachable_dual_bound(seed):
    logp, old, _, adv, mask = inputs(seed)
    obj = Objective(aggregation="token_mean", surrogate_args={"eps_low": EPS_LOW, "eps_high": EPS_HIGH})
    loss, grad, _ = rlvr(obj, logp, old, adv, mask)
    vloss, vgrad, _ = verl("vanilla", logp, old, adv, mask, "token-mean", actor(1e9))
    close(loss, vloss), close(grad, vgrad)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("mode", sorted(MODES))
def test_gspo_is_sequence_token(mode, seed):
    logp, old, _, adv, mask = inputs(seed)
    obj = Objective(ratio_level="sequence_token", aggregation=mode, aggregation_constant=C,
                    surrogate_args={"eps_low": EPS_LOW, "eps_high": EPS_HIGH})
    loss, grad, _ = rlvr(obj, logp, old, adv, mask)
    vloss, vgrad, _ = verl("gspo", logp, old, adv, mask, MODES[mode], actor())
    close(loss, vloss), close(grad, vgrad)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("mode", sorted(MODES))
def test_cispo_up_to_the_log_pi_old_term(mode, seed):
    logp, old, _, adv, mask = inputs(seed)
    obj = Objective(surrogate="cispo", aggregation=mode, aggregation_constant=C,
                    surrogate_args={"eps_low": EPS_LOW, "eps_high": EPS_HIGH})
    loss, grad, _ = rlvr(obj, logp, old, adv, mask)
    vloss, vgrad, _ = verl("cispo", logp, old, adv, mask, MODES[mode], actor())
    weight = (logp - old).exp().clamp(1 - EPS_LOW, 1 + EPS_HIGH)
    offset = (obj.weights(mask, torch.arange(mask.shape[0]) // 2) * -(weight * adv * old) * mask).sum()
    close(loss + offset, vloss), close(grad, vgrad)


@pytest.mark.parametrize("ours, theirs, clamp", [
    ("k1", "k1", None), ("k2", "k2", None), ("k3", "low_var_kl", 10.0), ("abs", "abs", None),
    ("k1_plus", "k1+", None), ("k3_plus", "k3+", 10.0), ("k3_plus", "low_var_kl+", 10.0), ("abs_plus", "abs+", None)])
def test_kl_penalty(ours, theirs, clamp):
    logp, _, ref, _, mask = inputs(0)
    ref = ref + 3.0 * mask * (torch.arange(T) == 0)  # one large gap per row, so k3's clamp bites
    x, y = logp.clone().requires_grad_(), logp.clone().requires_grad_()
    a, b = kl_estimate(ours, x, ref, clamp), core_algos.kl_penalty(y, ref, theirs)
    close(a, b)
    (a * mask).sum().backward(), (b * mask).sum().backward()
    close(x.grad, y.grad)


def test_value_loss():
    logp, old, ref, _, mask = inputs(0)
    values, old_values, returns = logp.clone().requires_grad_(), old, ref + 0.5
    per_token, ind = clipped_value_loss(values, old_values, returns, clip_eps=0.2)
    ours = (AGGREGATIONS["token_mean"](mask, torch.zeros(8, dtype=torch.long), 1.0) * per_token).sum()
    v = values.detach().clone().requires_grad_()
    theirs, clipfrac = core_algos.compute_value_loss(v, returns, old_values, mask, 0.2, "token-mean")
    ours.backward(), theirs.backward()
    close(ours, theirs), close(values.grad, v.grad)
    close((ind["value_clip"] * mask).sum() / mask.sum(), clipfrac)


def outcome(seed):
    """Outcome rewards on the last token. verl reads a row's reward off its token sum, so the
    empty row gets a token here (an empty row's reward would otherwise read as 0 there)."""
    _, _, _, _, mask = inputs(seed)
    mask[2, 0] = 1.0
    rewards = torch.tensor([1.0, 0.0, 1.0, 1.0, 0.5, 0.0, 0.0, 1.0], dtype=torch.float64)
    return rewards, mask, outcome_token_rewards(rewards, mask), np.arange(8) // 2


@pytest.mark.parametrize("scale, norm", [("group_std", True), ("none", False)])
def test_grpo_advantages(scale, norm):
    rewards, mask, token_rewards, index = outcome(0)
    theirs, _ = core_algos.compute_grpo_outcome_advantage(token_rewards, mask, index, 1e-6, norm)
    ours = outcome_advantages(rewards, torch.as_tensor(index), baseline="group_mean", scale=scale, eps=1e-6)
    close(ours[:, None] * mask, theirs)


def test_rloo_advantages_and_the_singleton_difference():
    rewards, mask, token_rewards, index = outcome(0)
    theirs, _ = core_algos.compute_rloo_outcome_advantage(token_rewards, mask, index)
    close(outcome_advantages(rewards, torch.as_tensor(index), baseline="rloo", scale="none")[:, None] * mask, theirs)
    # A singleton group (ids 0 and 1 alone): verl keeps r, rlvr gives 0.
    ids = np.array([0, 1])
    single, _ = core_algos.compute_rloo_outcome_advantage(token_rewards[:2], mask[:2], ids)
    assert single[0, 0].item() == 1.0
    assert outcome_advantages(rewards[:2], torch.as_tensor(ids), baseline="rloo", scale="none").tolist() == [0.0, 0.0]


@pytest.mark.parametrize("gamma", [1.0, 0.9])
def test_reinforce_pp(gamma):
    rewards, mask, token_rewards, index = outcome(1)
    penalty = 0.01 * torch.rand(mask.shape, generator=torch.Generator().manual_seed(3), dtype=torch.float64) * mask
    theirs, _ = core_algos.compute_reinforce_plus_plus_outcome_advantage(
        token_rewards - penalty, mask, config=AlgoConfig(gamma=gamma))
    ours = reinforce_pp_advantages(rewards, torch.as_tensor(index), mask, kl_penalty=penalty, gamma=gamma)
    close(ours, theirs)


def test_reinforce_pp_baseline():
    rewards, mask, token_rewards, index = outcome(1)
    theirs, _ = core_algos.compute_reinforce_plus_plus_baseline_outcome_advantage(token_rewards, mask, index)
    close(reinforce_pp_advantages(rewards, torch.as_tensor(index), mask, baseline="group_mean"), theirs)


@pytest.mark.parametrize("gamma, lam", [(1.0, 0.95), (0.99, 1.0), (1.0, 0.0)])
def test_gae(gamma, lam):
    _, _, values, _, mask = inputs(0)
    mask[1, 1] = 0.0  # a masked observation token inside row 1
    token_rewards = outcome_token_rewards(torch.linspace(-1, 1, 8, dtype=torch.float64), mask)
    adv, returns = core_algos.compute_gae_advantage_return(token_rewards, values, mask, gamma, lam)
    ours = gae_advantages(token_rewards, values, mask, gamma=gamma, lam=lam)
    close(masked_whiten(ours, mask), adv * mask)
    close((ours + values) * mask, returns * mask)


@pytest.mark.parametrize("seed", [0, 1])
def test_token_sum_aggregation(seed):
    logp, _, _, _, mask = inputs(seed)
    ours = (AGGREGATIONS["token_sum"](mask, torch.arange(mask.shape[0]) // 2, C) * logp).sum()
    close(ours, core_algos.agg_loss(logp, mask, "token-sum"))


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("taus", [(1.0, 1.05), (0.5, 3.0)])
def test_sapo(taus, seed):
    logp, old, _, adv, mask = inputs(seed)
    obj = Objective(surrogate="sapo", surrogate_args={"tau_pos": taus[0], "tau_neg": taus[1]})
    loss, grad, _ = rlvr(obj, logp, old, adv, mask)
    config = ActorConfig(strategy="fsdp", rollout_n=1, ppo_micro_batch_size_per_gpu=1, tau_pos=taus[0],
                         tau_neg=taus[1], global_batch_info={})
    vloss, vgrad, _ = verl("sapo", logp, old, adv, mask, "seq-mean-token-mean", config)
    close(loss, vloss), close(grad, vgrad)


@pytest.mark.parametrize("seed", [0, 1])
def test_gmpo_is_geo_mean(seed):
    logp, old, _, adv, mask = inputs(seed)
    keep = mask.sum(dim=1) > 0  # verl's torch.mean counts the empty row; compare without it
    logp, old, adv, mask = logp[keep], old[keep], adv[keep], mask[keep]
    obj = Objective(surrogate="gmpo", surrogate_args={"eps_low": EPS_LOW, "eps_high": EPS_HIGH})
    loss, grad, metrics = rlvr(obj, logp, old, adv, mask)
    vloss, vgrad, _ = verl("geo_mean", logp, old, adv, mask, "token-mean", actor())
    assert (metrics["policy/clip_high_frac"] + metrics["policy/clip_low_frac"]) > 0
    close(loss, vloss), close(grad, vgrad)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("ours, theirs", [("token_mis", "token_k1"), ("sequence_mis", "seq_sum_k1")])
def test_masked_is_is_verl_rejection_times_its_ratio(ours, theirs, seed):
    # verl's k1 rejection bounds mu / pi_old (its k1 is -log(pi_old / mu)): keep iff
    # lower <= mu / pi_old <= upper, i.e. 1 / upper <= rho <= 1 / lower for rho = pi_old / mu.
    from verl.trainer.ppo.rollout_corr_helper import compute_rollout_rejection_mask

    from rlvr.algo.engine_mismatch import MISMATCH_CORRECTIONS

    engine, trainer, _, _, mask = inputs(seed)  # gaps 0.5 N(0, 1) a token: some outside the band
    keep, _ = compute_rollout_rejection_mask(trainer - engine, mask, theirs, "0.5_1.25")
    ours_w = MISMATCH_CORRECTIONS[ours](trainer, engine, mask, cap=2.0, low=0.8)
    rho = (trainer - engine) * mask
    if ours == "sequence_mis":
        rho = rho.sum(dim=1, keepdim=True).expand_as(mask)
    assert 0 < keep[mask.bool()].sum() < mask.sum()
    expected = torch.where(mask.bool(), keep * rho.exp(), torch.ones_like(mask))
    close(ours_w, expected)


def rlvr_with(objective: Objective, logp, old, adv, mask, **fields):
    b = mask.shape[0]
    batch = Batch(input_ids=torch.zeros(b, 1 + T, dtype=torch.long),
                  attention_mask=torch.ones(b, 1 + T, dtype=torch.long),
                  completion_mask=mask, old_logp=old, adv=adv, group_ids=torch.arange(b) // 2, **fields)
    x = logp.clone().requires_grad_()
    loss, metrics = objective.loss(x, batch, objective.weights(mask, batch.group_ids))
    loss.backward()
    return loss.detach(), x.grad, metrics


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("name", ["gpg", "dro"])
def test_gpg_is_reinforce_and_dro_up_to_the_log_pi_old_term(name, mode, seed):
    # verl writes log pi where rlvr writes log r = log pi - log pi_old: equal gradients, losses
    # apart by -A log pi_old (no gradient), aggregated like the loss.
    from verl.workers.config.actor import PolicyLossConfig

    logp, old, _, adv, mask = inputs(seed)
    ours, args = ("reinforce", {}) if name == "gpg" else ("dro", {"beta": 0.3})
    obj = Objective(surrogate=ours, surrogate_args=args, aggregation=mode, aggregation_constant=C)
    loss, grad, _ = rlvr(obj, logp, old, adv, mask)
    config = ActorConfig(strategy="fsdp", rollout_n=1, ppo_micro_batch_size_per_gpu=1,
                         global_batch_info={"loss_scale_factor": C}, policy_loss=PolicyLossConfig(dro_beta=0.3))
    vloss, vgrad, _ = verl(name, logp, old, adv, mask, MODES[mode], config)
    offset = (obj.weights(mask, torch.arange(mask.shape[0]) // 2) * -(adv * old) * mask).sum()
    close(loss + offset, vloss), close(grad, vgrad)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("name, eps", [("dppo_tv", (0.1, 0.15)), ("dppo_kl", (0.02, 0.03))])
@pytest.mark.parametrize("mode", sorted(MODES))
def test_dppo_up_to_the_log_pi_old_term(mode, name, eps, seed):
    # verl reads DPPO's divergence thresholds from clip_ratio_low / _high and its IS cap from
    # clip_ratio_c; it multiplies log pi where rlvr has log r: the offset sg(w) A log pi_old on
    # the kept tokens has no gradient (the gradients, compared alone, check which are kept).
    from rlvr.algo.surrogates import SURROGATES

    logp, old, _, adv, mask = inputs(seed)
    args = {"eps_low": eps[0], "eps_high": eps[1], "clip_c": 1.5}
    obj = Objective(surrogate=name, aggregation=mode, aggregation_constant=C, surrogate_args=args)
    loss, grad, metrics = rlvr(obj, logp, old, adv, mask)
    config = ActorConfig(strategy="fsdp", rollout_n=1, ppo_micro_batch_size_per_gpu=1, clip_ratio_low=eps[0],
                         clip_ratio_high=eps[1], clip_ratio_c=1.5, global_batch_info={"loss_scale_factor": C})
    vloss, vgrad, vmetrics = verl(name, logp, old, adv, mask, MODES[mode], config)
    close(grad, vgrad)
    masked = SURROGATES[name](logp - old, adv, mask, old, **args)[1]["masked"]
    weight = (logp - old).exp().clamp(max=1.5)
    offset = (obj.weights(mask, torch.arange(mask.shape[0]) // 2) * -(weight * adv * old) * (1 - masked) * mask).sum()
    close(loss + offset, vloss)
    assert 0 < (masked * mask * (adv != 0)).sum() < (mask * (adv != 0)).sum()  # some dropped, some kept
    if mode == "token_mean":  # verl's pg_clipfrac is the token-mean share of dropped tokens
        close(metrics["policy/masked_frac"], vmetrics["actor/pg_clipfrac"])
