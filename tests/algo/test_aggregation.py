"""Tests for rlvr.algo.aggregation: per-token weights W (B, T) with loss = sum(W * per_token).

    token_mean               DAPO (arXiv:2503.14476 eq. 8): 1 / (tokens in the batch)
    seq_mean_token_mean      GRPO (arXiv:2402.03300 eq. 3): 1 / |o_i| / (non-empty rows)
    seq_mean_token_sum_norm  Dr. GRPO (arXiv:2503.20783): 1 / C / (non-empty rows)
    prompt_mean              ScaleRL (arXiv:2510.13786): 1 / (tokens in the group) / (non-empty groups)
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.algo.aggregation import AGGREGATIONS

FAST = settings(max_examples=50, deadline=None)
MODES = sorted(AGGREGATIONS)
C = 8.0

# Ragged rows, row 2 fully masked, group 2 (row 4) fully masked.
MASK = torch.tensor(
    [
        [1, 1, 1, 0],  # len 3, group 0
        [1, 0, 0, 0],  # len 1, group 0
        [0, 0, 0, 0],  # len 0, group 1
        [1, 1, 0, 0],  # len 2, group 1
        [0, 0, 0, 0],  # len 0, group 2
    ],
    dtype=torch.float64,
)
GROUP_IDS = torch.tensor([0, 0, 1, 1, 2])


def row_weights(w0, w1, w3):
    """Full (5, 4) weights from one weight per token of rows 0, 1 and 3."""
    return torch.tensor(
        [[w0, w0, w0, 0], [w1, 0, 0, 0], [0, 0, 0, 0], [w3, w3, 0, 0], [0, 0, 0, 0]], dtype=torch.float64
    )


HAND = {
    # 6 tokens in the batch: 1/6 each.
    "token_mean": row_weights(1 / 6, 1 / 6, 1 / 6),
    # 3 non-empty rows of lengths 3, 1, 2: 1/3/3 = 1/9, 1/1/3 = 1/3, 1/2/3 = 1/6.
    "seq_mean_token_mean": row_weights(1 / 9, 1 / 3, 1 / 6),
    # C = 8, 3 non-empty rows: 1/8/3 = 1/24 for every token.
    "seq_mean_token_sum_norm": row_weights(1 / 24, 1 / 24, 1 / 24),
    # group 0 has 3 + 1 = 4 tokens, group 1 has 0 + 2 = 2, group 2 none -> 2 non-empty groups:
    # 1/4/2 = 1/8 and 1/2/2 = 1/4.
    "prompt_mean": row_weights(1 / 8, 1 / 8, 1 / 4),
    # verl's token-sum: 1 for every token, no normalisation.
    "token_sum": row_weights(1.0, 1.0, 1.0),
}


def test_hand_cases_cover_every_mode():
    assert set(HAND) == set(AGGREGATIONS)


@pytest.mark.parametrize("mode", MODES)
def test_hand_computed_weights(mode):
    torch.testing.assert_close(AGGREGATIONS[mode](MASK, GROUP_IDS, C), HAND[mode], rtol=1e-15, atol=0)


@pytest.mark.parametrize("mode", MODES)
def test_fully_masked_batch_gives_zero_weights(mode):
    w = AGGREGATIONS[mode](torch.zeros(3, 4, dtype=torch.float64), torch.tensor([0, 0, 1]), C)
    assert w.tolist() == torch.zeros(3, 4).tolist()


@st.composite
def ragged(draw, min_rows=1):
    """(mask (B, T) float64 of arbitrary 0/1 patterns, group_ids (B,), loss (B, T))."""
    b, t = draw(st.integers(min_rows, 6)), draw(st.integers(1, 6))
    bits = draw(st.lists(st.lists(st.booleans(), min_size=t, max_size=t), min_size=b, max_size=b))
    n_groups = draw(st.integers(1, b))
    group_ids = draw(st.lists(st.integers(0, n_groups - 1), min_size=b, max_size=b))
    seed = draw(st.integers(0, 2**16))
    loss = torch.randn(b, t, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    return torch.tensor(bits, dtype=torch.float64), torch.tensor(group_ids), loss


@FAST
@given(batch=ragged(), mode=st.sampled_from(MODES), data=st.data())
def test_fully_masked_row_changes_nothing(batch, mode, data):
    mask, group_ids, loss = batch
    b, t = mask.shape
    at = data.draw(st.integers(0, b))
    group = data.draw(st.integers(0, int(group_ids.max()) + 3))  # an existing group or a new one
    garbage = data.draw(st.floats(min_value=-1e6, max_value=1e6))
    insert = lambda x, row: torch.cat([x[:at], row, x[at:]])  # noqa: E731
    mask2 = insert(mask, torch.zeros(1, t, dtype=mask.dtype))
    ids2 = insert(group_ids, torch.tensor([group]))
    loss2 = insert(loss, torch.full((1, t), garbage, dtype=loss.dtype))
    before = (AGGREGATIONS[mode](mask, group_ids, C) * loss).sum()
    after = (AGGREGATIONS[mode](mask2, ids2, C) * loss2).sum()
    torch.testing.assert_close(after, before, rtol=1e-12, atol=1e-15)


@FAST
@given(batch=ragged(), mode=st.sampled_from(MODES), rows=st.integers(1, 3))
def test_fully_masked_group_changes_nothing(batch, mode, rows):
    mask, group_ids, loss = batch
    t = mask.shape[1]
    new = int(group_ids.max()) + 1
    mask2 = torch.cat([mask, torch.zeros(rows, t, dtype=mask.dtype)])
    ids2 = torch.cat([group_ids, torch.full((rows,), new)])
    loss2 = torch.cat([loss, torch.full((rows, t), 1e6, dtype=loss.dtype)])
    before = (AGGREGATIONS[mode](mask, group_ids, C) * loss).sum()
    after = (AGGREGATIONS[mode](mask2, ids2, C) * loss2).sum()
    torch.testing.assert_close(after, before, rtol=1e-12, atol=1e-15)


@FAST
@given(batch=ragged(), mode=st.sampled_from(MODES), extra=st.integers(1, 5))
def test_zero_padding_columns_changes_nothing(batch, mode, extra):
    # In particular seq_mean_token_sum_norm divides by the constant C, not the padded width T.
    mask, group_ids, _ = batch
    w = AGGREGATIONS[mode](mask, group_ids, C)
    padded = torch.cat([mask, torch.zeros(mask.shape[0], extra, dtype=mask.dtype)], dim=1)
    wp = AGGREGATIONS[mode](padded, group_ids, C)
    assert torch.equal(wp[:, : mask.shape[1]], w)
    assert not wp[:, mask.shape[1] :].any()


@FAST
@given(batch=ragged(), mode=st.sampled_from(MODES))
def test_masked_tokens_weigh_nothing(batch, mode):
    mask, group_ids, _ = batch
    w = AGGREGATIONS[mode](mask, group_ids, C)
    assert not w[mask == 0].any()
    assert (w[mask == 1] > 0).all()


@FAST
@given(batch=ragged())
def test_token_mean_weights_sum_to_one(batch):
    mask, group_ids, _ = batch
    w = AGGREGATIONS["token_mean"](mask, group_ids, C)
    assert w.sum().item() == pytest.approx(1.0 if mask.any() else 0.0, rel=1e-12)
    if mask.any():
        assert torch.allclose(w[mask == 1], 1 / mask.sum())


@FAST
@given(batch=ragged())
def test_seq_mean_token_mean_rows_weigh_one_over_nonempty_rows(batch):
    mask, group_ids, _ = batch
    per_row = AGGREGATIONS["seq_mean_token_mean"](mask, group_ids, C).sum(dim=1)
    nonempty = mask.sum(dim=1) > 0
    expected = torch.where(nonempty, 1.0 / nonempty.sum().clamp(min=1).double(), 0.0)
    torch.testing.assert_close(per_row, expected, rtol=1e-12, atol=0)


@FAST
@given(batch=ragged())
def test_seq_mean_token_sum_norm_is_row_sum_over_constant(batch):
    # Dr. GRPO: (1 / n_nonempty) sum_i (1 / C) sum_t loss_it.
    mask, group_ids, loss = batch
    n_nonempty = max(int((mask.sum(dim=1) > 0).sum()), 1)
    expected = (mask * loss).sum() / C / n_nonempty
    got = (AGGREGATIONS["seq_mean_token_sum_norm"](mask, group_ids, C) * loss).sum()
    torch.testing.assert_close(got, expected, rtol=1e-12, atol=1e-15)


@FAST
@given(batch=ragged())
def test_prompt_mean_groups_weigh_one_over_nonempty_groups(batch):
    mask, group_ids, _ = batch
    w = AGGREGATIONS["prompt_mean"](mask, group_ids, C)
    groups = group_ids.unique()
    tokens = torch.stack([mask[group_ids == g].sum() for g in groups])
    expected = torch.where(tokens > 0, 1.0 / (tokens > 0).sum().clamp(min=1).double(), 0.0)
    got = torch.stack([w[group_ids == g].sum() for g in groups])
    torch.testing.assert_close(got, expected, rtol=1e-12, atol=0)
