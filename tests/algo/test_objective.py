"""Tests for rlvr.algo.objective.Objective: the composed loss against a loop-written reference,
micro-batching, masking, the KL term and the axis-name checks.

GRPO (arXiv:2402.03300, eq. 3): L = 1/G sum_i 1/|o_i| sum_t -min(r_it A_it, clip(r_it) A_it)
                                   + beta KL_k3 (eq. 4), with r_it = pi / pi_old.
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.algo import AGGREGATIONS, KL_ESTIMATORS, Objective
from rlvr.types import Batch

FAST = settings(max_examples=50, deadline=None)
MODES = sorted(AGGREGATIONS)
KLS = ["none", *sorted(KL_ESTIMATORS)]
EPS_LOW, EPS_HIGH, C, PROMPT_LEN = 0.2, 0.28, 6.0, 2


def make_batch(mask, adv, old_logp, group_ids, ref_logp=None) -> Batch:
    b, t = mask.shape
    return Batch(
        input_ids=torch.zeros(b, PROMPT_LEN + t, dtype=torch.long),
        attention_mask=torch.ones(b, PROMPT_LEN + t, dtype=torch.long),
        completion_mask=mask,
        old_logp=old_logp,
        adv=adv,
        group_ids=group_ids,
        ref_logp=ref_logp,
    )


def random_batch(seed: int, b: int = 6, t: int = 5, n_groups: int = 3):
    """A float64 batch padded like `collate` (zeros after each completion, row 4 empty), its
    current log-probs `logp` (B, T) (far enough from old_logp that some tokens clip) and
    features `x` (B, T) for a toy model logp = old_logp + tanh(x * theta)."""
    gen = torch.Generator().manual_seed(seed)
    lengths = torch.randint(1, t + 1, (b,), generator=gen)
    lengths[4] = 0
    mask = (torch.arange(t) < lengths[:, None]).double()
    randn = lambda: torch.randn(b, t, generator=gen, dtype=torch.float64)  # noqa: E731
    adv = torch.randn(b, 1, generator=gen, dtype=torch.float64) * mask
    old_logp = -3 * torch.rand(b, t, generator=gen, dtype=torch.float64) * mask
    logp = old_logp + 0.4 * randn()
    ref_logp = (old_logp + 0.3 * randn()) * mask
    group_ids = torch.randint(0, n_groups, (b,), generator=gen)
    return make_batch(mask, adv, old_logp, group_ids, ref_logp), logp, randn()


def objective(aggregation="seq_mean_token_mean", kl="none", kl_coef=0.0) -> Objective:
    return Objective(
        surrogate_args={"eps_low": EPS_LOW, "eps_high": EPS_HIGH},
        aggregation=aggregation,
        aggregation_constant=C,
        kl=kl,
        kl_coef=kl_coef,
    )


def reference_loss(logp, batch: Batch, aggregation: str, kl: str, kl_coef: float) -> float:
    """The loss written as loops over plain floats."""
    lp, old, adv, mask = (x.tolist() for x in (logp, batch.old_logp, batch.adv, batch.completion_mask))
    ref = batch.ref_logp.tolist() if batch.ref_logp is not None else None
    per_token = {}  # (i, t) -> loss of an unmasked token
    for i, row in enumerate(mask):
        for t, m in enumerate(row):
            if not m:
                continue
            r, a = math.exp(lp[i][t] - old[i][t]), adv[i][t]
            loss = -min(r * a, min(max(r, 1 - EPS_LOW), 1 + EPS_HIGH) * a)
            if kl != "none":
                d = ref[i][t] - lp[i][t]
                # a straight-through "_plus" form has the value of its base
                values = {"k1": -d, "k2": d * d / 2, "k3": math.expm1(d) - d, "abs": abs(d)}
                loss += kl_coef * values[kl.removesuffix("_plus")]
            per_token[i, t] = loss
    rows = sorted({i for i, _ in per_token})
    row_sum = {i: sum(v for (j, _), v in per_token.items() if j == i) for i in rows}
    row_len = {i: sum(mask[i]) for i in rows}
    if aggregation == "token_mean":
        return sum(per_token.values()) / len(per_token)
    if aggregation == "seq_mean_token_mean":
        return sum(row_sum[i] / row_len[i] for i in rows) / len(rows)
    if aggregation == "seq_mean_token_sum_norm":
        return sum(row_sum[i] / C for i in rows) / len(rows)
    if aggregation == "token_sum":
        return sum(per_token.values())
    if aggregation == "prompt_mean":
        gids = batch.group_ids.tolist()
        groups = sorted({gids[i] for i in rows})
        in_group = lambda g: [i for i in rows if gids[i] == g]  # noqa: E731
        group_mean = lambda g: sum(row_sum[i] for i in in_group(g)) / sum(row_len[i] for i in in_group(g))  # noqa: E731
        return sum(group_mean(g) for g in groups) / len(groups)
    raise AssertionError(f"no reference for aggregation {aggregation!r}; add one here")


def full_loss(obj: Objective, logp, batch: Batch):
    return obj.loss(logp, batch, obj.weights(batch.completion_mask, batch.group_ids))


# --- hand-computed -----------------------------------------------------------------------------


def test_grpo_hand_computed():
    # eps = 0.2 both sides (GRPO). Row 0 (A = +1), two tokens: r = 1.5 -> min(1.5, 1.2) -> -1.2;
    # r = 1 -> -1. Row 1 (A = -1), one token: r = 0.5 -> min(-0.5, -0.8) = -0.8 -> +0.8.
    # Per-sequence means: (-1.2 - 1) / 2 = -1.1 and 0.8; mean over sequences: -0.15.
    mask = torch.tensor([[1.0, 1.0], [1.0, 0.0]], dtype=torch.float64)
    adv = torch.tensor([[1.0, 1.0], [-1.0, 0.0]], dtype=torch.float64) * mask
    old_logp = torch.tensor([[-1.0, -2.0], [-1.0, 0.0]], dtype=torch.float64)
    logp = old_logp + torch.tensor([[math.log(1.5), 0.0], [math.log(0.5), 0.0]], dtype=torch.float64)
    batch = make_batch(mask, adv, old_logp, torch.tensor([0, 1]))
    loss, metrics = full_loss(Objective(), logp, batch)
    assert loss.item() == pytest.approx(-0.15, rel=1e-12)
    # token (0, 0) clipped high with weight 1/2/2 = 1/4; token (1, 0) clipped low, weight 1/1/2.
    assert metrics["policy/clip_high_frac"].item() == pytest.approx(0.25, rel=1e-12)
    assert metrics["policy/clip_low_frac"].item() == pytest.approx(0.5, rel=1e-12)
    # ratio mean: (1.5 + 1) / 4 + 0.5 / 2 = 0.875.
    assert metrics["policy/ratio_mean"].item() == pytest.approx(0.875, rel=1e-12)


def test_k3_penalty_hand_computed():
    # On-policy with A = 0 the surrogate is 0. pi = 0.5, pi_ref = 0.25 at both tokens:
    # k3 = (0.5 - 1) + log 2 = 0.1931471805599453 each, mean 0.1931471805599453,
    # loss = beta * mean k3 = 0.04 * 0.1931471805599453 = 0.007725887222397812 (eq. 4).
    mask = torch.ones(1, 2, dtype=torch.float64)
    logp = torch.full((1, 2), math.log(0.5), dtype=torch.float64)
    ref_logp = torch.full((1, 2), math.log(0.25), dtype=torch.float64)
    batch = make_batch(mask, torch.zeros(1, 2, dtype=torch.float64), logp.clone(), torch.tensor([0]), ref_logp)
    loss, metrics = full_loss(objective(kl="k3", kl_coef=0.04), logp, batch)
    assert loss.item() == pytest.approx(0.007725887222397812, rel=1e-12)
    assert metrics["policy/kl_ref"].item() == pytest.approx(0.1931471805599453, rel=1e-12)


# --- equivalences and invariants ---------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), kl=st.sampled_from(KLS))
def test_loss_equals_loop_reference(mode, seed, kl):
    batch, logp, _ = random_batch(seed)
    kl_coef = 0.0 if kl == "none" else 0.1
    loss, _ = full_loss(objective(mode, kl, kl_coef), logp, batch)
    assert loss.item() == pytest.approx(reference_loss(logp, batch, mode, kl, kl_coef), rel=1e-10, abs=1e-10)


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), kl=st.sampled_from(["none", "k3"]), data=st.data())
def test_micro_batches_add_up_to_the_full_batch(mode, seed, kl, data):
    batch, _, x = random_batch(seed)
    obj = objective(mode, kl, 0.0 if kl == "none" else 0.1)
    theta = torch.linspace(-1, 1, x.shape[1], dtype=torch.float64).requires_grad_()
    model = lambda b, rows: b.old_logp + torch.tanh(x[rows] * theta)  # noqa: E731
    weights = obj.weights(batch.completion_mask, batch.group_ids)

    every = torch.arange(x.shape[0])
    full, full_metrics = obj.loss(model(batch, every), batch, weights)
    (full_grad,) = torch.autograd.grad(full, theta)

    order = torch.tensor(data.draw(st.permutations(range(x.shape[0]))))
    cut = data.draw(st.integers(1, x.shape[0] - 1))
    total, grad, metrics = 0.0, torch.zeros_like(theta), {}
    for rows in (order[:cut], order[cut:]):
        micro = batch.rows(rows)
        loss, m = obj.loss(model(micro, rows), micro, weights[rows])
        grad += torch.autograd.grad(loss, theta)[0]
        total = total + loss.detach()
        metrics = {k: metrics.get(k, 0.0) + v for k, v in m.items()}
    torch.testing.assert_close(total, full.detach(), rtol=1e-12, atol=1e-14)
    torch.testing.assert_close(grad, full_grad, rtol=1e-12, atol=1e-14)
    assert metrics.keys() == full_metrics.keys()
    for k in metrics:
        torch.testing.assert_close(metrics[k], full_metrics[k], rtol=1e-12, atol=1e-14)


@FAST
@given(seed=st.integers(0, 2**32 - 1), mode=st.sampled_from(MODES), kl=st.sampled_from(KLS))
def test_masked_tokens_get_exactly_zero_gradient(seed, mode, kl):
    batch, logp, noise = random_batch(seed)
    mask = batch.completion_mask
    # The current policy's log-probs at padding are whatever the model says there.
    logp = torch.where(mask.bool(), logp, -10 * noise.abs()).requires_grad_()
    loss, _ = full_loss(objective(mode, kl, 0.0 if kl == "none" else 0.1), logp, batch)
    loss.backward()
    assert logp.grad[mask == 0].tolist() == [0.0] * int((mask == 0).sum())
    assert (logp.grad[mask == 1] != 0).any()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kl", sorted(KL_ESTIMATORS))
@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_kl_term_adds_coef_times_aggregated_kl(mode, kl, seed):
    batch, logp, _ = random_batch(seed)
    weights = objective(mode).weights(batch.completion_mask, batch.group_ids)
    without, _ = full_loss(objective(mode), logp, batch)
    with_kl, metrics = full_loss(objective(mode, kl, 0.3), logp, batch)
    kl_mean = (weights * KL_ESTIMATORS[kl](logp, batch.ref_logp)).sum()
    torch.testing.assert_close(with_kl - without, 0.3 * kl_mean, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(metrics["policy/kl_ref"], kl_mean, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("mode", MODES)
def test_on_policy_metrics(mode):
    batch, _, _ = random_batch(0)
    weights = objective(mode).weights(batch.completion_mask, batch.group_ids)
    _, metrics = objective(mode).loss(batch.old_logp.clone(), batch, weights)
    assert metrics["policy/clip_low_frac"].item() == 0.0
    assert metrics["policy/clip_high_frac"].item() == 0.0
    assert metrics["policy/approx_kl"].item() == 0.0
    assert metrics["policy/ratio_mean"].item() == pytest.approx(weights.sum().item(), rel=1e-12)


# --- padding with extreme log-probs ------------------------------------------------------------


def extreme_padding_batch():
    """float32, as the trainer runs: padding log-probs of the current policy at -100 (possible at a
    low temperature), old_logp and ref_logp zero there, as `collate` and the batch chain make them."""
    mask = torch.tensor([[1.0, 1.0, 0.0]])
    old_logp = torch.tensor([[-1.0, -2.0, 0.0]])
    batch = make_batch(mask, torch.ones(1, 3) * mask, old_logp, torch.tensor([0]), ref_logp=old_logp.clone())
    logp = torch.tensor([[-1.1, -1.9, -100.0]], requires_grad=True)
    return batch, logp


def test_k3_penalty_ignores_extreme_padding():
    batch, logp = extreme_padding_batch()
    loss, _ = full_loss(objective(kl="k3", kl_coef=0.04), logp, batch)
    loss.backward()
    assert torch.isfinite(loss)
    assert logp.grad[0, 2].item() == 0.0


def test_approx_kl_is_cleanrls_estimator_hand_computed():
    # cleanrl: r = pi / pi_old, approx_kl = (r - 1) - log r. pi = 0.5, pi_old = 0.25: r = 2,
    # (2 - 1) - log 2 = 0.3068528194400547. The swapped k3, (1/r - 1) + log r, gives 0.1931.
    mask = torch.ones(1, 1, dtype=torch.float64)
    batch = make_batch(mask, mask, torch.tensor([[math.log(0.25)]], dtype=torch.float64), torch.tensor([0]))
    logp = torch.tensor([[math.log(0.5)]], dtype=torch.float64)
    _, metrics = full_loss(objective(), logp, batch)
    assert metrics["policy/approx_kl"].item() == pytest.approx(0.3068528194400547, rel=1e-12)


def test_approx_kl_metric_ignores_extreme_padding():
    batch, logp = extreme_padding_batch()
    loss, metrics = full_loss(objective(), logp, batch)
    assert torch.isfinite(loss)
    assert torch.isfinite(metrics["policy/approx_kl"])


# --- configuration errors ----------------------------------------------------------------------


@pytest.mark.parametrize("axis", ["ratio_level", "surrogate", "aggregation", "kl"])
def test_unknown_axis_name_raises_naming_it(axis):
    with pytest.raises(ValueError, match=f"unknown {axis} 'no_such_thing'"):
        Objective(**{axis: "no_such_thing"})


def test_kl_without_ref_logp_raises():
    batch, logp, _ = random_batch(0)
    batch = make_batch(batch.completion_mask, batch.adv, batch.old_logp, batch.group_ids, ref_logp=None)
    obj = objective(kl="k3", kl_coef=0.1)
    assert obj.needs_ref and not objective().needs_ref
    with pytest.raises(ValueError, match="kl='k3' needs ref_logp"):
        full_loss(obj, logp, batch)
