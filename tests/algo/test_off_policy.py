"""Tests for rlvr.algo.off_policy: DeepSeek-V3.2's off-policy sequence mask,

    M_i = 0 if A_i < 0 and mean_t log(pi_old / pi) > delta, else 1.
"""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.algo.off_policy import off_policy_sequence_mask

MASK = torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0]], dtype=torch.float64)


def test_hand_computed():
    # mean log(pi_old / pi) per row (padding ignored): row 0 (0.2 + 0.4) / 2 = 0.3 with A < 0
    # -> dropped at delta 0.25; row 1 0.1 with A < 0 -> kept; row 2 0.9 with A > 0 -> kept
    # (positives are never dropped); row 3 0.3 with A = 0 -> kept (not negative).
    old = torch.zeros(4, 3, dtype=torch.float64)
    logp = -torch.tensor([[0.2, 0.4, 7.0], [0.1, 0.1, 0.1], [0.9, 0.0, 0.0], [0.3, 0.3, 0.0]], dtype=torch.float64)
    adv = torch.tensor([-1.0, -2.0, 1.0, 0.0], dtype=torch.float64)[:, None] * MASK
    keep = off_policy_sequence_mask(logp, old, adv, MASK, delta=0.25)
    assert keep.tolist() == [[0.0], [1.0], [1.0], [1.0]]
    # A sequence the policy moved *towards* (mean log-ratio < 0) is kept whatever its sign.
    assert off_policy_sequence_mask(-logp, old, adv, MASK, delta=0.25).tolist() == [[1.0]] * 4


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**16), delta=st.floats(1e-3, 2.0))
def test_on_policy_keeps_everything_and_positives_are_never_dropped(seed, delta):
    gen = torch.Generator().manual_seed(seed)
    logp = -3 * torch.rand(4, 3, generator=gen, dtype=torch.float64)
    adv = torch.randn(4, 1, generator=gen, dtype=torch.float64) * MASK
    assert off_policy_sequence_mask(logp, logp.clone(), adv, MASK, delta).all()
    far = off_policy_sequence_mask(logp - 10.0, logp, adv, MASK, delta)
    positive = (adv * MASK).sum(1, keepdim=True) >= 0
    assert far[positive].all() and not far[~positive].any()
