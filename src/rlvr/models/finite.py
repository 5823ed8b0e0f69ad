"""Is every number of a set of tensors finite? One cheap reduction, then a slow search by name.

The cheap test sums each tensor and the sums (a sum is finite only if every term is, barring
an overflow of |sum| past 3e38, which is itself a diverged model): one read of the weights, far
less than the optimiser's own passes. Only when it fails are the tensors searched one by one.
"""

from __future__ import annotations

from typing import Iterable

import torch


def all_finite(tensors: Iterable[torch.Tensor]) -> bool:
    """True when every element of every tensor is finite (one host sync)."""
    sums = [t.detach().sum(dtype=torch.float32) for t in tensors]
    if not sums:
        return True
    total = torch.stack([s.full_tensor() if hasattr(s, "full_tensor") else s for s in sums]).sum()
    return bool(torch.isfinite(total))


def first_nonfinite(named: Iterable[tuple[str, torch.Tensor]]) -> tuple[str, str] | None:
    """(name, what) of the first tensor holding NaN or inf, e.g. ("lm_head.weight", "12 NaN, 0 inf
    of 4096"); None when all are finite."""
    for name, t in named:
        t = t.detach()
        t = t.full_tensor() if hasattr(t, "full_tensor") else t
        bad = ~torch.isfinite(t)
        if bool(bad.any()):
            nans = int(torch.isnan(t).sum())
            return name, f"{nans} NaN, {int(bad.sum()) - nans} inf of {t.numel()}"
    return None
