"""Length-dependent reward shaping and truncation masks (DAPO, arXiv:2503.14476 §3.4).

Pure functions of lengths and finish reasons; the loop adds the shaped term to the verifier
reward (`rewards + overlong_penalty(...)`) or multiplies the completion mask by
`truncation_mask(...)`.
"""

from __future__ import annotations

import torch

Tensor = torch.Tensor


def overlong_penalty(lengths: Tensor, *, max_len: int, cache_len: int) -> Tensor:
    """DAPO's soft overlong punishment (eq. 13), added to the reward. (B,) lengths → (B,):

        0                                    if |y| <= L_max - L_cache
        ((L_max - L_cache) - |y|) / L_cache  if L_max - L_cache < |y| <= L_max
        -1                                   if |y| > L_max

    The penalty ramps linearly from 0 to -1 across the last `cache_len` tokens of the budget,
    so the policy learns that length costs before it is cut off. DAPO: L_max = 20480,
    L_cache = 4096 (an expected length of 16384).
    """
    if not 0 < cache_len <= max_len:
        raise ValueError(f"overlong shaping needs 0 < cache_len ({cache_len}) <= max_len ({max_len})")
    lengths = lengths.to(torch.float64)
    expected = max_len - cache_len
    ramp = (expected - lengths) / cache_len
    return torch.where(lengths <= expected, torch.zeros_like(ramp),
                       torch.where(lengths <= max_len, ramp, torch.full_like(ramp, -1.0)))


def truncation_mask(truncated: Tensor, mask: Tensor) -> Tensor:
    """DAPO's overlong filtering: drop truncated samples from the loss. truncated (B,) bool (the
    rollout hit the budget: finish reason `length`), mask (B, T) → (B, T) with those rows
    zeroed. A zeroed row changes no aggregation (see `rlvr.algo.aggregation`)."""
    return mask * (~truncated.bool()).to(mask.dtype)[:, None]
