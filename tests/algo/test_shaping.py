"""Tests for rlvr.algo.shaping: DAPO's soft overlong punishment (arXiv:2503.14476 eq. 13) and
the truncation mask (overlong filtering)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.algo.shaping import overlong_penalty, truncation_mask


def test_overlong_penalty_hand_computed():
    # L_max = 20, L_cache = 4: free up to 16; 17 -> (16-17)/4 = -0.25; 18 -> -0.5; 20 -> -1;
    # 21 (past the budget) -> -1.
    got = overlong_penalty(torch.tensor([0, 10, 16, 17, 18, 20, 21]), max_len=20, cache_len=4)
    assert got.tolist() == [0.0, 0.0, 0.0, -0.25, -0.5, -1.0, -1.0]


def test_overlong_penalty_dapo_setting():
    # DAPO: L_max = 20480, L_cache = 4096: 16384 is free, 18432 is half-way (-0.5).
    got = overlong_penalty(torch.tensor([16384, 18432, 20480]), max_len=20480, cache_len=4096)
    assert got.tolist() == [0.0, -0.5, -1.0]


@settings(max_examples=50, deadline=None)
@given(lengths=st.lists(st.integers(0, 100), min_size=1, max_size=10), cache=st.integers(1, 40))
def test_overlong_penalty_is_monotone_and_bounded(lengths, cache):
    got = overlong_penalty(torch.tensor(sorted(lengths)), max_len=60, cache_len=cache)
    assert (got <= 0).all() and (got >= -1).all()
    assert (got[1:] <= got[:-1]).all()


@pytest.mark.parametrize("max_len, cache_len", [(10, 0), (10, 11)])
def test_overlong_penalty_rejects_bad_budgets(max_len, cache_len):
    with pytest.raises(ValueError, match="cache_len"):
        overlong_penalty(torch.tensor([1]), max_len=max_len, cache_len=cache_len)


def test_truncation_mask_zeroes_truncated_rows():
    mask = torch.tensor([[1.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    got = truncation_mask(torch.tensor([False, False, True]), mask)
    assert got.tolist() == [[1.0, 1.0], [1.0, 0.0], [0.0, 0.0]]
