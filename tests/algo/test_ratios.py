"""Tests for rlvr.algo.ratios: token, sequence (GSPO) and sequence_token (GSPO-token) log-ratios.

GSPO (arXiv:2507.18071 eq. 7): log s_i = 1/|y_i| sum_t (logp - old_logp), broadcast to the row.
GSPO-token (§4.3): log s_{i,t} = sg(log s_i) + logp_t - sg(logp_t).
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.algo.aggregation import AGGREGATIONS
from rlvr.algo.ratios import RATIO_LEVELS
from rlvr.algo.surrogates import SURROGATES

FAST = settings(max_examples=40, deadline=None)

MASK = torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0], [0.0, 0.0, 0.0]], dtype=torch.float64)
OLD = torch.tensor([[-1.0, -2.0, 0.0], [-0.5, -0.5, -0.5], [0.0, 0.0, 0.0]], dtype=torch.float64)
DELTA = torch.tensor([[0.1, 0.3, 5.0], [0.3, -0.3, 0.6], [1.0, 1.0, 1.0]], dtype=torch.float64)


def grad_of_row_sum(level: str, row: int):
    """d (sum_t log_ratio[row, t]) / d logp, to read the per-token gradient weights."""
    logp = (OLD + DELTA).requires_grad_()
    log_ratio = RATIO_LEVELS[level](logp, OLD, MASK)
    log_ratio[row].sum().backward()
    return log_ratio.detach(), logp.grad


def test_sequence_hand_computed():
    # Row 0: (0.1 + 0.3) / 2 = 0.2 on both tokens; its padding (delta 5.0) is ignored.
    # Row 1: (0.3 - 0.3 + 0.6) / 3 = 0.2. Row 2 is empty: 0.
    log_ratio, grad = grad_of_row_sum("sequence", 0)
    expected = torch.tensor([[0.2, 0.2, 0.0], [0.2, 0.2, 0.2], [0.0, 0.0, 0.0]], dtype=torch.float64)
    torch.testing.assert_close(log_ratio, expected, rtol=1e-12, atol=1e-15)
    # Row 0's two tokens each carry log s_0, so d(sum)/d logp_t = 2 * 1/2 = 1 per token.
    torch.testing.assert_close(grad[0], torch.tensor([1.0, 1.0, 0.0], dtype=torch.float64))
    assert not grad[1:].any()


def test_sequence_token_value_is_the_sequence_ratio_gradient_is_the_token_own():
    seq, _ = grad_of_row_sum("sequence", 1)
    log_ratio, grad = grad_of_row_sum("sequence_token", 1)
    torch.testing.assert_close(log_ratio, seq, rtol=0, atol=1e-15)  # seq + logp - logp: an ulp
    # Each token of row 1 has gradient 1 from its own log-prob only.
    torch.testing.assert_close(grad[1], torch.ones(3, dtype=torch.float64))
    assert not grad[0].any() and not grad[2].any()


def test_token_hand_computed():
    log_ratio, grad = grad_of_row_sum("token", 0)
    torch.testing.assert_close(log_ratio, DELTA * MASK, rtol=1e-12, atol=1e-15)
    torch.testing.assert_close(grad[0], torch.tensor([1.0, 1.0, 0.0], dtype=torch.float64))


@pytest.mark.parametrize("level", sorted(RATIO_LEVELS))
def test_on_policy_every_level_is_zero_with_unit_token_gradient_sum(level):
    logp = OLD.clone().requires_grad_()
    log_ratio = RATIO_LEVELS[level](logp, OLD, MASK)
    assert not log_ratio.detach().any()
    log_ratio.sum().backward()
    # Summed over a row, every normalised level gives each of its |y_i| tokens total weight 1;
    # the un-normalised sequence sum (RLOO) gives each |y_i|, one full ratio per token copy.
    scale = MASK.sum(dim=1, keepdim=True) if level == "sequence_sum" else 1.0
    torch.testing.assert_close(logp.grad, MASK * scale, rtol=1e-12, atol=1e-15)


@st.composite
def batches(draw):
    b, t = draw(st.integers(1, 5)), draw(st.integers(1, 6))
    lengths = draw(st.lists(st.integers(0, t), min_size=b, max_size=b))
    seed = draw(st.integers(0, 2**16))
    gen = torch.Generator().manual_seed(seed)
    mask = (torch.arange(t) < torch.tensor(lengths)[:, None]).double()
    old = -3 * torch.rand(b, t, generator=gen, dtype=torch.float64)
    logp = old + 0.3 * torch.randn(b, t, generator=gen, dtype=torch.float64)
    adv = torch.randn(b, 1, generator=gen, dtype=torch.float64).expand(b, t) * mask
    return logp, old, mask, adv


@FAST
@given(data=batches(), surrogate=st.sampled_from(["ppo_clip", "dual_clip"]))
def test_gspo_and_gspo_token_agree_with_sequence_advantages(data, surrogate):
    # GSPO §4.3: with A_{i,t} = A_i, GSPO-token and GSPO have the same objective and gradient
    # under the paper's per-sequence aggregation (1/G sum_i 1/|y_i| sum_t).
    logp, old, mask, adv = data
    args = {"eps_low": 3e-2, "eps_high": 4e-2} | ({"clip_c": 1.5} if surrogate == "dual_clip" else {})
    weights = AGGREGATIONS["seq_mean_token_mean"](mask, torch.zeros(mask.shape[0], dtype=torch.long), 1.0)
    results = []
    for level in ("sequence", "sequence_token"):
        x = logp.clone().requires_grad_()
        loss, _ = SURROGATES[surrogate](RATIO_LEVELS[level](x, old, mask), adv, **args)
        total = (weights * loss * mask).sum()
        total.backward()
        results.append((total.detach(), x.grad))
    torch.testing.assert_close(results[0][0], results[1][0], rtol=1e-12, atol=1e-14)
    torch.testing.assert_close(results[0][1], results[1][1], rtol=1e-10, atol=1e-14)


def test_gspo_token_keeps_per_token_credit_that_gspo_averages_away():
    # One row, two tokens, A = (+1, -1), on-policy. GSPO-token: gradient -A_t per token.
    # GSPO: every token gets 1/2 sum_t -A_t = 0: the sequence ratio smears the credit.
    old = torch.tensor([[-1.0, -1.0]], dtype=torch.float64)
    mask, adv = torch.ones(1, 2, dtype=torch.float64), torch.tensor([[1.0, -1.0]], dtype=torch.float64)
    grads = {}
    for level in ("sequence", "sequence_token"):
        x = old.clone().requires_grad_()
        loss, _ = SURROGATES["ppo_clip"](RATIO_LEVELS[level](x, old, mask), adv, eps_low=0.2, eps_high=0.2)
        loss.sum().backward()
        grads[level] = x.grad
    assert grads["sequence_token"].tolist() == [[-1.0, 1.0]]
    assert grads["sequence"].tolist() == [[0.0, 0.0]]


def test_sequence_ratio_is_geometric_mean_of_token_ratios():
    # s = (1.2 * 0.9 * 1.5) ^ (1/3) = 1.62 ^ (1/3) = 1.1745156...
    r = [1.2, 0.9, 1.5]
    old = torch.zeros(1, 3, dtype=torch.float64)
    logp = torch.tensor([[math.log(x) for x in r]], dtype=torch.float64)
    s = RATIO_LEVELS["sequence"](logp, old, torch.ones(1, 3, dtype=torch.float64)).exp()
    assert s[0, 0].item() == pytest.approx(1.62 ** (1 / 3), rel=1e-12)


def test_sequence_sum_hand_computed():
    # Row 0: 0.1 + 0.3 = 0.4 on both tokens (padding ignored); row 1: 0.3 - 0.3 + 0.6 = 0.6.
    log_ratio, grad = grad_of_row_sum("sequence_sum", 1)
    expected = torch.tensor([[0.4, 0.4, 0.0], [0.6, 0.6, 0.6], [0.0, 0.0, 0.0]], dtype=torch.float64)
    torch.testing.assert_close(log_ratio, expected, rtol=1e-12, atol=1e-15)
    # Row 1's three tokens each carry the full sum: d(sum of the three)/d logp_t = 3 per token.
    torch.testing.assert_close(grad[1], torch.full((3,), 3.0, dtype=torch.float64))
    assert not grad[0].any() and not grad[2].any()


def test_sequence_sum_is_length_times_the_gspo_log_ratio():
    seq, _ = grad_of_row_sum("sequence", 0)
    seq_sum, _ = grad_of_row_sum("sequence_sum", 0)
    torch.testing.assert_close(seq_sum, seq * MASK.sum(dim=1, keepdim=True), rtol=1e-12, atol=1e-15)


def test_sequence_sum_stays_finite_on_long_drifting_rows():
    # 400 tokens, each 0.25 nats off-policy: the row sums to 100, past float32's exp range. The
    # clamp at 20 keeps loss and gradient finite for both signs of A (review finding, 2026-12-01).
    old = torch.full((2, 400), -1.0)
    logp = (old + 0.25).requires_grad_()
    mask = torch.ones(2, 400)
    log_ratio = RATIO_LEVELS["sequence_sum"](logp, old, mask)
    loss, _ = SURROGATES["ppo_clip"](log_ratio, torch.tensor([[1.0], [-1.0]]).expand(2, 400), eps_low=0.2, eps_high=0.2)
    loss.sum().backward()
    assert torch.isfinite(loss).all() and torch.isfinite(logp.grad).all()
    assert log_ratio.max().item() == 20.0
