"""Tests for the newer axes of rlvr.algo.objective.Objective: every (ratio level, surrogate,
aggregation) combination under the generic invariants, the entropy bonus, KL placement and
clamp, and the checks of an Objective built directly from Python."""

from __future__ import annotations

import itertools
import math
import re

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.algo import AGGREGATIONS, RATIO_LEVELS, SURROGATES, Objective
from rlvr.types import Batch

FAST = settings(max_examples=40, deadline=None)
ARGS = {
    "ppo_clip": {"eps_low": 0.2, "eps_high": 0.28},
    "dual_clip": {"eps_low": 0.2, "eps_high": 0.28, "clip_c": 1.5},
    "cispo": {"eps_low": 0.2, "eps_high": 0.28},
    "sapo": {"tau_pos": 1.0, "tau_neg": 1.05},
    "gmpo": {"eps_low": 0.4, "eps_high": 0.4},
    "reinforce": {},
    "dro": {"beta": 2.0},
    "dppo_tv": {"eps_low": 0.2, "eps_high": 0.28, "clip_c": 3.0},
    "dppo_kl": {"eps_low": 0.05, "eps_high": 0.05, "clip_c": 3.0},
    "vespo": {"k_pos": 2.0, "lambda_pos": 3.0, "k_neg": 3.0, "lambda_neg": 2.0},
}
# The combinations the config refuses at load (tests/config/test_coherence.py checks this list) are left out.
COMBOS = [(lv, s, a) for lv in sorted(RATIO_LEVELS) for s in sorted(SURROGATES) for a in sorted(AGGREGATIONS)
          if not (s == "cispo" and lv in ("sequence", "sequence_sum")) and not (s in ("gmpo", "vespo", "dppo_tv", "dppo_kl") and lv != "token")]


def make_batch(mask, adv, old_logp, group_ids, ref_logp=None) -> Batch:
    b, t = mask.shape
    return Batch(input_ids=torch.zeros(b, 2 + t, dtype=torch.long),
                 attention_mask=torch.ones(b, 2 + t, dtype=torch.long),
                 completion_mask=mask, old_logp=old_logp, adv=adv, group_ids=group_ids, ref_logp=ref_logp)


def random_batch(seed: int, b: int = 6, t: int = 5):
    """float64 batch with ragged rows, row 4 empty, far enough off-policy that tokens clip
    (ratios up to e^(+-1.2), past the dual-clip bound 1.5); features x for a toy model."""
    gen = torch.Generator().manual_seed(seed)
    lengths = torch.randint(1, t + 1, (b,), generator=gen)
    lengths[4] = 0
    mask = (torch.arange(t) < lengths[:, None]).double()
    randn = lambda: torch.randn(b, t, generator=gen, dtype=torch.float64)  # noqa: E731
    adv = torch.randn(b, 1, generator=gen, dtype=torch.float64) * mask
    old_logp = -3 * torch.rand(b, t, generator=gen, dtype=torch.float64) * mask
    ref_logp = (old_logp + 0.3 * randn()) * mask
    batch = make_batch(mask, adv, old_logp, torch.randint(0, 3, (b,), generator=gen), ref_logp)
    return batch, randn()


def objective(level="token", surrogate="ppo_clip", aggregation="seq_mean_token_mean", **kw) -> Objective:
    return Objective(ratio_level=level, surrogate=surrogate, surrogate_args=ARGS[surrogate],
                     aggregation=aggregation, aggregation_constant=6.0, **kw)


def toy_logp(batch: Batch, x, rows, theta):
    return batch.old_logp + 1.2 * torch.tanh(x[rows] * theta)


def toy_entropy(x, rows, theta):
    return torch.nn.functional.softplus(x[rows] * theta.flip(0))


# --- every combination: micro-batching, masking, empty rows -----------------------------------


@FAST
@given(seed=st.integers(0, 2**32 - 1), combo=st.sampled_from(COMBOS), cut=st.integers(1, 5),
       entropy_coef=st.sampled_from([0.0, 0.01]))
def test_every_combination_micro_batches_exactly(seed, combo, cut, entropy_coef):
    batch, x = random_batch(seed)
    obj = objective(*combo, kl="k3", kl_coef=0.05, entropy_coef=entropy_coef)
    theta = torch.linspace(-1, 1, x.shape[1], dtype=torch.float64).requires_grad_()
    weights = obj.weights(batch.completion_mask, batch.group_ids)
    every = torch.arange(x.shape[0])
    full, full_metrics = obj.loss(toy_logp(batch, x, every, theta), batch, weights, toy_entropy(x, every, theta))
    (full_grad,) = torch.autograd.grad(full, theta)
    total, grad, metrics = 0.0, torch.zeros_like(theta), {}
    order = torch.randperm(x.shape[0], generator=torch.Generator().manual_seed(seed))
    for rows in (order[:cut], order[cut:]):
        micro = batch.rows(rows)
        loss, m = obj.loss(toy_logp(micro, x, rows, theta), micro, weights[rows], toy_entropy(x, rows, theta))
        grad += torch.autograd.grad(loss, theta)[0]
        total = total + loss.detach()
        metrics = {k: metrics.get(k, 0.0) + v for k, v in m.items()}
    torch.testing.assert_close(total, full.detach(), rtol=1e-12, atol=1e-14)
    torch.testing.assert_close(grad, full_grad, rtol=1e-10, atol=1e-13)
    for k in full_metrics:
        torch.testing.assert_close(metrics[k], full_metrics[k], rtol=1e-12, atol=1e-14)


@FAST
@given(seed=st.integers(0, 2**32 - 1), combo=st.sampled_from(COMBOS))
def test_every_combination_gives_masked_tokens_zero_gradient(seed, combo):
    batch, noise = random_batch(seed)
    mask = batch.completion_mask
    logp = torch.where(mask.bool(), batch.old_logp + 0.5 * noise, -50 * noise.abs()).requires_grad_()
    entropy = (noise.abs() * 3).requires_grad_()
    obj = objective(*combo, kl="k3", kl_coef=0.05, entropy_coef=0.01)
    loss, _ = obj.loss(logp, batch, obj.weights(mask, batch.group_ids), entropy)
    loss.backward()
    assert torch.isfinite(loss)
    assert not logp.grad[mask == 0].any() and not entropy.grad[mask == 0].any()


@FAST
@given(seed=st.integers(0, 2**32 - 1), combo=st.sampled_from(COMBOS), at=st.integers(0, 6))
def test_every_combination_ignores_a_fully_masked_row(seed, combo, at):
    batch, noise = random_batch(seed)
    logp = batch.old_logp + 0.5 * noise
    obj = objective(*combo, kl="k3", kl_coef=0.05)
    base, _ = obj.loss(logp, batch, obj.weights(batch.completion_mask, batch.group_ids))
    t = logp.shape[1]
    ins = lambda v, row: torch.cat([v[:at], row, v[at:]])  # noqa: E731
    junk = torch.full((1, t), -7.0, dtype=torch.float64)
    bigger = make_batch(ins(batch.completion_mask, torch.zeros(1, t, dtype=torch.float64)), ins(batch.adv, junk + 9),
                        ins(batch.old_logp, junk), ins(batch.group_ids, torch.tensor([1])), ins(batch.ref_logp, junk))
    after, _ = obj.loss(ins(logp, junk * 3), bigger, obj.weights(bigger.completion_mask, bigger.group_ids))
    torch.testing.assert_close(after, base, rtol=1e-12, atol=1e-14)


# --- entropy bonus ------------------------------------------------------------------------------


def on_policy_batch(adv=0.0):
    mask = torch.ones(1, 2, dtype=torch.float64)
    logp = torch.full((1, 2), math.log(0.5), dtype=torch.float64)
    ref = torch.full((1, 2), math.log(0.25), dtype=torch.float64)
    return make_batch(mask, adv * mask, logp.clone(), torch.tensor([0]), ref), logp


def test_entropy_bonus_hand_computed():
    # A = 0, on-policy: the surrogate is 0. H = [1.0, 2.0], seq_mean_token_mean: mean 1.5.
    # loss = -0.01 * 1.5 = -0.015; d loss / d H_t = -0.01 * W_t = -0.01 / 2 = -0.005.
    batch, logp = on_policy_batch()
    entropy = torch.tensor([[1.0, 2.0]], dtype=torch.float64, requires_grad=True)
    obj = objective(entropy_coef=0.01)
    loss, metrics = obj.loss(logp, batch, obj.weights(batch.completion_mask, batch.group_ids), entropy)
    loss.backward()
    assert loss.item() == pytest.approx(-0.015, rel=1e-12)
    assert metrics["policy/entropy"].item() == pytest.approx(1.5, rel=1e-12)
    assert entropy.grad.tolist() == [[-0.005, -0.005]]


def test_entropy_coef_needs_the_entropy():
    batch, logp = on_policy_batch()
    obj = objective(entropy_coef=0.01)
    assert obj.needs_entropy_grad and not objective().needs_entropy_grad
    with pytest.raises(ValueError, match="needs the per-token entropy"):
        obj.loss(logp, batch, obj.weights(batch.completion_mask, batch.group_ids))


# --- KL placement and clamp ---------------------------------------------------------------------


def test_kl_in_the_reward_is_not_in_the_loss_but_is_reported():
    # pi = 0.5, pi_ref = 0.25: k3 = (0.5 - 1) + log 2 = 0.1931471805599453 per token.
    batch, logp = on_policy_batch()
    obj = objective(kl="k3", kl_coef=0.04, kl_placement="reward")
    loss, metrics = obj.loss(logp, batch, obj.weights(batch.completion_mask, batch.group_ids))
    assert loss.item() == 0.0 and obj.needs_ref
    assert metrics["policy/kl_ref"].item() == pytest.approx(0.1931471805599453, rel=1e-12)
    # Without ref log-probs it still works: the KL was paid in the advantages.
    no_ref = make_batch(batch.completion_mask, batch.adv, batch.old_logp, batch.group_ids)
    loss, metrics = obj.loss(logp, no_ref, obj.weights(batch.completion_mask, batch.group_ids))
    assert "policy/kl_ref" not in metrics


def test_kl_clamp_bounds_the_penalty():
    # pi_ref / pi = e^5: k3 = (e^5 - 1) - 5 = 142.41..., clamped to 10 (verl's low_var_kl bound).
    batch, logp = on_policy_batch()
    batch = make_batch(batch.completion_mask, batch.adv, batch.old_logp, batch.group_ids, logp + 5)
    obj = objective(kl="k3", kl_coef=1.0, kl_clamp=10.0)
    loss, metrics = obj.loss(logp, batch, obj.weights(batch.completion_mask, batch.group_ids))
    assert loss.item() == 10.0 and metrics["policy/kl_ref"].item() == 10.0


# --- what an Objective built from Python checks ----------------------------------------------------
# (Which combinations of axes are coherent is decided at load, from the config: the cases are in
# tests/config/test_coherence.py, and the COMBOS above are checked against it there.)


@pytest.mark.parametrize("args, message", [
    (ARGS["ppo_clip"], "'dual_clip' takes surrogate_args ['clip_c', 'eps_high', 'eps_low']"),
    (ARGS["ppo_clip"] | {"clip_c": 1.5, "delta": 3.0}, "got ['clip_c', 'delta', 'eps_high', 'eps_low']"),
])
def test_surrogate_args_must_be_the_declared_parameters(args, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        Objective(surrogate="dual_clip", surrogate_args=args)
    Objective(surrogate="dual_clip", surrogate_args=ARGS["dual_clip"])


def test_unknown_kl_placement_raises_naming_it():
    with pytest.raises(ValueError, match="unknown kl_placement 'critic'"):
        Objective(kl_placement="critic")


def test_the_objective_test_combos_are_exactly_the_coherent_ones():
    """The invariants above run over COMBOS; every other (ratio level, surrogate) pair must be
    one the config refuses at load (config/coherence_run.py)."""
    from rlvr.config import load_config
    from rlvr.errors import ConfigError
    from rlvr.names import AGGREGATION, RATIO_LEVEL, SURROGATE

    for level, surrogate, aggregation in itertools.product(RATIO_LEVEL.names, SURROGATE.names, AGGREGATION.names):
        keys = [f"algo.{p if p.startswith('eps') else surrogate + '.' + p}={v}" for p, v in ARGS[surrogate].items()]
        overrides = [f'algo.ratio_level="{level}"', f'algo.surrogate="{surrogate}"', f'algo.aggregation="{aggregation}"',
                     *keys, *(["algo.seq_mean_token_sum_norm.constant=6.0"] if aggregation == "seq_mean_token_sum_norm" else [])]
        if (level, surrogate, aggregation) in COMBOS:
            load_config(None, overrides)
        else:
            with pytest.raises(ConfigError, match=f"algo.ratio_level = '{level}'"):
                load_config(None, overrides)
