"""Per-token estimators of KL(pi || pi_ref) from samples of pi (Schulman 2020, "Approximating
KL divergence"). With log-ratio d = log pi_ref - log pi at the sampled token:

    k1 = -d                 unbiased, can be negative
    k2 = d^2 / 2            biased, low variance
    k3 = (e^d - 1) - d      unbiased, always >= 0 (GRPO's choice, arXiv:2402.03300 eq. 4)

All are 0 when pi == pi_ref. Inputs (B, T), output (B, T).
"""

from __future__ import annotations

from typing import Callable

import torch

Tensor = torch.Tensor


def k1(logp: Tensor, ref_logp: Tensor) -> Tensor:
    return logp - ref_logp


def k2(logp: Tensor, ref_logp: Tensor) -> Tensor:
    return 0.5 * (ref_logp - logp) ** 2


def k3(logp: Tensor, ref_logp: Tensor) -> Tensor:
    d = ref_logp - logp
    return torch.expm1(d) - d


KL_ESTIMATORS: dict[str, Callable[[Tensor, Tensor], Tensor]] = {"k1": k1, "k2": k2, "k3": k3}
