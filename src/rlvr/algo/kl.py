"""Per-token estimators of KL(pi || pi_ref) from samples of pi (Schulman 2020, "Approximating
KL divergence"). With log-ratio d = log pi_ref - log pi at the sampled token:

    k1 = -d                 unbiased, can be negative
    k2 = d^2 / 2            biased, low variance
    k3 = (e^d - 1) - d      unbiased, always >= 0 (GRPO's choice, arXiv:2402.03300 eq. 4)
    abs = |d|               verl's "abs": biased, >= 0, a constant-size gradient

and the straight-through forms of verl (its "k1+", "k3+", "abs+"): the value of k1 / k3 / abs,
the gradient of k2, k2 - sg(k2) + sg(k). The expected gradient of k1 and k3 under samples of pi
is not that of the KL they estimate; k2's is the reverse KL's (Schulman 2020; verl's
`kl_penalty`), so the "+" forms report an unbiased value and follow the right gradient.

All are 0 when pi == pi_ref. Inputs (B, T), output (B, T).
"""

from __future__ import annotations

from typing import Callable

import torch

from rlvr import names

Tensor = torch.Tensor


def k1(logp: Tensor, ref_logp: Tensor) -> Tensor:
    return logp - ref_logp


def k2(logp: Tensor, ref_logp: Tensor) -> Tensor:
    return 0.5 * (ref_logp - logp) ** 2


def k3(logp: Tensor, ref_logp: Tensor) -> Tensor:
    d = ref_logp - logp
    return torch.expm1(d) - d


def abs_kl(logp: Tensor, ref_logp: Tensor) -> Tensor:
    return (logp - ref_logp).abs()


def with_k2_gradient(value: Tensor, logp: Tensor, ref_logp: Tensor) -> Tensor:
    """`value`'s numbers with k2's gradient: k2 - sg(k2) + sg(value). (B, T) each → (B, T)."""
    grad = k2(logp, ref_logp)
    return grad - grad.detach() + value.detach()


# each straight-through estimator and the one whose value it reports
STRAIGHT_THROUGH = {"k1_plus": "k1", "k3_plus": "k3", "abs_plus": "abs"}
_PLAIN = {"k1": k1, "k2": k2, "k3": k3, "abs": abs_kl}

KL_ESTIMATORS: dict[str, Callable[[Tensor, Tensor], Tensor]] = names.KL.bind({
    **_PLAIN,
    **{plus: (lambda logp, ref_logp, f=_PLAIN[base]: with_k2_gradient(f(logp, ref_logp), logp, ref_logp))
       for plus, base in STRAIGHT_THROUGH.items()},
}, without=("none",), table="KL_ESTIMATORS")


def kl_estimate(estimator: str, logp: Tensor, ref_logp: Tensor, clamp: float | None = None) -> Tensor:
    """KL_ESTIMATORS[estimator], optionally clamped to [-clamp, clamp]. (B, T), (B, T) → (B, T).

    A clamp bounds the penalty of tokens where the reference assigns almost no mass (k3 grows
    like e^d); where it is active the token's KL gradient is 0. verl's `low_var_kl` is k3
    with clamp 10.

    With a clamp the log-ratio d = ref_logp - logp is first limited to [-(c+1), c+1]: beyond
    that every estimator's value already exceeds c (k3(d) >= |d| - 1 for d < 0 and >= d^2/2
    for d > 0), so values and gradients are unchanged, but e^d can no longer overflow and turn
    the clamped token's zero gradient into 0 * inf = NaN (d > ~88 in float32). verl limits
    d to [-20, 20] first for the same reason.

    A straight-through estimator clamps its value only: its k2 gradient stays unclamped, as
    verl's "k3+" does with low_var_kl's clamp.
    """
    if estimator in STRAIGHT_THROUGH:
        return with_k2_gradient(kl_estimate(STRAIGHT_THROUGH[estimator], logp, ref_logp, clamp), logp, ref_logp)
    if clamp is None:
        return KL_ESTIMATORS[estimator](logp, ref_logp)
    d = (ref_logp - logp).clamp(-(clamp + 1), clamp + 1)
    return KL_ESTIMATORS[estimator](ref_logp - d, ref_logp).clamp(-clamp, clamp)


def kl_reward_penalty(
    old_logp: Tensor, ref_logp: Tensor, mask: Tensor, *, estimator: str, coef: float,
    clamp: float | None = None,
) -> Tensor:
    """The KL placed in the reward (PPO-RLHF, Ouyang et al. 2022, arXiv:2203.02155 eq. 2):
    a per-token penalty coef * KL_t(pi_old || pi_ref), to subtract from the token rewards
    before computing returns or advantages. Computed from the behaviour policy, no gradient.
    (B, T) each → (B, T), zero on masked tokens.

    In the reward, k1 makes the summed penalty an unbiased estimate of the sequence KL; in the
    loss (GRPO eq. 4) the estimator's gradient matters instead, which is why k3 is used there.
    """
    with torch.no_grad():
        kl = kl_estimate(estimator, old_logp, ref_logp, clamp)
        return coef * torch.where(mask.bool(), kl, torch.zeros_like(kl))
