"""Per-token policy surrogates (losses to minimise), before aggregation.

Each takes the log-ratio (B, T) from a ratio level, the advantages (B, T), the completion
mask (B, T) (read only by GMPO and VESPO, whose weights are per sequence) and the behaviour
log-probs (B, T) (read only by DPPO, whose trust region is on probabilities), and returns the
per-token loss (B, T) and a dict of (B, T) 0/1 indicators for the metrics (which tokens were
clipped).
Hyperparameters are keyword-only, so that `Objective` can check a recipe's `surrogate_args`
against the signature and name a missing or foreign one.

On-policy (log_ratio = 0 with gradient d/d logp = 1) every surrogate here has the vanilla
policy-gradient gradient -A per token: the clip only acts once the policy has moved.
"""

from __future__ import annotations

import math
from typing import Callable

import torch

from rlvr import names

Tensor = torch.Tensor
Surrogate = Callable[..., tuple[Tensor, dict[str, Tensor]]]


def ppo_clip(
    log_ratio: Tensor, adv: Tensor, mask: Tensor | None = None, old_logp: Tensor | None = None, *, eps_low: float, eps_high: float
) -> tuple[Tensor, dict[str, Tensor]]:
    """PPO's clipped surrogate (Schulman et al. 2017, arXiv:1707.06347, eq. 7) with decoupled
    bounds (DAPO clip-higher, arXiv:2503.14476, eq. 10).

        loss_t = -min(r_t A_t, clip(r_t, 1 - eps_low, 1 + eps_high) A_t)

    With eps_low == eps_high this is PPO / GRPO; DAPO's clip-higher raises eps_high.
    `clip_low` marks tokens whose ratio fell below 1 - eps_low with A < 0 (gradient cut),
    `clip_high` those above 1 + eps_high with A > 0.
    """
    ratio = torch.exp(log_ratio)
    clipped = torch.clamp(ratio, 1.0 - eps_low, 1.0 + eps_high)
    loss = -torch.minimum(ratio * adv, clipped * adv)
    indicators = {
        "clip_low": ((ratio < 1.0 - eps_low) & (adv < 0)).to(adv.dtype),
        "clip_high": ((ratio > 1.0 + eps_high) & (adv > 0)).to(adv.dtype),
    }
    return loss, indicators


def dual_clip(
    log_ratio: Tensor, adv: Tensor, mask: Tensor | None = None, old_logp: Tensor | None = None, *, eps_low: float, eps_high: float, clip_c: float
) -> tuple[Tensor, dict[str, Tensor]]:
    """Dual-clip PPO (Ye et al. 2020, arXiv:1912.09729, §3): for A < 0 the PPO objective is
    bounded below by c A, so a token whose ratio ran far above 1 cannot produce an unbounded
    update (c > 1; c = 3 is verl's default, which we have not checked against the paper).

        loss_t = -max(min(r_t A_t, clip(r_t) A_t), c A_t)   if A_t < 0
        loss_t = -min(r_t A_t, clip(r_t) A_t)                otherwise

    `clip_dual` marks tokens where the bound is active (r_t > c, A_t < 0: gradient cut).
    TRL's `delta` (two-sided clipping) is the same bound when delta >= 1 + eps_high.
    """
    loss, indicators = ppo_clip(log_ratio, adv, eps_low=eps_low, eps_high=eps_high)
    bound = -clip_c * adv
    negative = adv < 0
    indicators["clip_dual"] = (negative & (loss > bound)).to(adv.dtype)
    return torch.where(negative, torch.minimum(loss, bound), loss), indicators


def cispo(
    log_ratio: Tensor, adv: Tensor, mask: Tensor | None = None, old_logp: Tensor | None = None, *, eps_low: float, eps_high: float
) -> tuple[Tensor, dict[str, Tensor]]:
    """CISPO (MiniMax-M1, arXiv:2506.13585, §3.1): clip the importance weight, not the update.

        loss_t = -sg(clip(r_t, 1 - eps_low, 1 + eps_high)) * A_t * log r_t

    Every token keeps a gradient, -clip(r_t) A_t d log pi_t: a clipped token is down-weighted,
    never dropped (PPO's clip zeroes the gradient of exactly the rare, high-ratio tokens that
    open a reflective branch). The paper writes log pi_t where we write log r_t =
    log pi_t - log pi_old_t: the two differ by sg(w) A log pi_old, which has no gradient, and
    ours reads 0 on-policy. The paper sets eps_low large (no lower bound) and tunes eps_high.
    `weight_clip_low` / `weight_clip_high` mark tokens whose weight was clipped (any A).
    """
    ratio = torch.exp(log_ratio.detach())
    weight = torch.clamp(ratio, 1.0 - eps_low, 1.0 + eps_high)
    loss = -weight * adv * log_ratio
    indicators = {
        "weight_clip_low": (ratio < 1.0 - eps_low).to(adv.dtype),
        "weight_clip_high": (ratio > 1.0 + eps_high).to(adv.dtype),
    }
    return loss, indicators


# Beyond |log r| = 20 the soft gate is flat (sigma' ~ 0) but e^{log r} may overflow, and
# 0 * inf = NaN; verl clamps SAPO's log-ratio at the same bound.
_SAPO_MAX_LOG_RATIO = 20.0


def sapo(
    log_ratio: Tensor, adv: Tensor, mask: Tensor | None = None, old_logp: Tensor | None = None, *, tau_pos: float, tau_neg: float
) -> tuple[Tensor, dict[str, Tensor]]:
    """SAPO, soft adaptive policy optimisation (Gao et al. 2025, arXiv:2511.20347): a smooth,
    temperature-controlled gate instead of a hard clip,

        loss_t = -f(r_t) A_t,   f(r) = (4 / tau) sigmoid(tau (r - 1)),   tau = tau_pos if A_t > 0 else tau_neg

    f(1) = 2/tau and f'(1) = 1, so on-policy the gradient is the vanilla -A; as r leaves 1 the
    gradient weight f'(r) r = 4 sigma(x)(1 - sigma(x)) r, x = tau (r - 1), decays smoothly
    instead of dropping to 0 at a clip edge. A larger tau_neg damps negative updates faster
    (the paper's choice: tau_neg > tau_pos). `gate_weak` marks tokens whose gradient weight
    fell below half of its on-policy value.
    """
    ratio = torch.exp(log_ratio.clamp(-_SAPO_MAX_LOG_RATIO, _SAPO_MAX_LOG_RATIO))
    tau = torch.where(adv > 0, torch.full_like(adv, tau_pos), torch.full_like(adv, tau_neg))
    gate = torch.sigmoid(tau * (ratio - 1.0))
    loss = -(4.0 / tau) * gate * adv
    weight = 4.0 * gate * (1.0 - gate) * ratio
    return loss, {"gate_weak": (weight.detach() < 0.5).to(adv.dtype)}


def gmpo(
    log_ratio: Tensor, adv: Tensor, mask: Tensor | None = None, old_logp: Tensor | None = None, *, eps_low: float, eps_high: float
) -> tuple[Tensor, dict[str, Tensor]]:
    """GMPO, geometric-mean policy optimisation (Zhao et al. 2025, arXiv:2507.20673): one
    objective per sequence from the geometric mean of its token ratios, each clipped in log
    space on the pessimistic side,

        c_t = sgn(A) min(sgn(A) log r_t, sgn(A) clip(log r_t, -eps_low, eps_high))
        loss_i = -A_i exp(1/|y_i| sum_t c_t)

    broadcast to every token of row i (aggregate with `seq_mean_token_mean` for the paper's
    mean over sequences). The geometric mean is less sensitive to a single outlier token than
    GRPO's arithmetic mean, so the paper widens the clip range (eps = 0.4 in log space). Needs
    outcome advantages (constant along a row) and the token ratio level. `clip_low` /
    `clip_high` mark tokens where the clip is active (their gradient is cut), by the sign of A.
    """
    mask = torch.ones_like(log_ratio) if mask is None else mask
    sign = torch.sign(adv)
    clamped = log_ratio.clamp(-eps_low, eps_high)
    pessimistic = sign * torch.minimum(sign * log_ratio, sign * clamped)
    lengths = mask.sum(dim=-1, keepdim=True).clamp(min=1)
    seq_log_ratio = (pessimistic * mask).sum(dim=-1, keepdim=True) / lengths
    loss = -adv * torch.exp(seq_log_ratio)
    clipped = pessimistic.detach() != log_ratio.detach()  # the clip is active: no gradient
    return loss, {"clip_low": (clipped & (adv < 0)).to(adv.dtype), "clip_high": (clipped & (adv > 0)).to(adv.dtype)}


def reinforce(log_ratio: Tensor, adv: Tensor, mask: Tensor | None = None, old_logp: Tensor | None = None) -> tuple[Tensor, dict[str, Tensor]]:
    """REINFORCE without a trust region (Williams 1992; GPG, Chu et al. 2025, arXiv:2504.02546,
    and verl's `gpg` loss): loss_t = -A_t log r_t, whose gradient -A_t d log pi_t ignores how far
    the policy has moved. (verl writes -A log pi: the same gradient, a constant apart.) With one
    update per batch on-policy it equals every clipped surrogate; with more it has no brake."""
    return -adv * log_ratio, {}


def dro(log_ratio: Tensor, adv: Tensor, mask: Tensor | None = None, old_logp: Tensor | None = None, *, beta: float) -> tuple[Tensor, dict[str, Tensor]]:
    """A quadratic trust region instead of a clip (verl's `dro` loss; Richemond et al. 2024,
    direct reward optimisation):

        loss_t = -(A_t log r_t - (beta / 2) (log r_t)^2)

    The gradient -(A_t - beta log r_t) d log pi_t pulls back in proportion to the drift, so an
    update stops where log r_t = A_t / beta. (verl writes log pi in the first term.)"""
    return -(adv * log_ratio - 0.5 * beta * log_ratio.square()), {}


# TRL's bounds on VESPO's log-weights: per token +-20 (exp overflows beyond), and the sequence's
# log w in [log 1e-8, 20] (TRL's choice "to match the original implementation").
_VESPO_LOG_W = (math.log(1e-8), 20.0)


def vespo(log_ratio: Tensor, adv: Tensor, mask: Tensor | None = None, old_logp: Tensor | None = None, *, k_pos: float, lambda_pos: float,
          k_neg: float, lambda_neg: float) -> tuple[Tensor, dict[str, Tensor]]:
    """VESPO, variational sequence-level soft policy optimisation (arXiv:2602.10693, as TRL
    1.16's loss_type "vespo"): no clip; each token's log-prob gradient is scaled by a Gamma-shaped
    function of the *sequence* importance weight w_i = prod_t r_t (the unnormalised product),

        phi(w) = e^lam w^k e^(-lam w)   (phi(1) = 1, largest at w = k / lam, -> 0 as w -> 0 or inf)
        loss_t = -sg(phi(w_i)) A_t log r_t,   (k, lam) = (k_pos, lambda_pos) if A_t >= 0 else (k_neg, lambda_neg)

    On-policy w = 1, phi = 1: the vanilla gradient. Sequences that drifted far either way fade
    smoothly instead of being cut at a clip edge; TRL's defaults (k, lam) = (2, 3) for A >= 0 and
    (3, 2) for A < 0. TRL writes log pi for log r (a no-gradient difference, as with CISPO).
    Needs the token ratio level (it forms w itself). `weight_low` marks tokens of sequences
    whose phi fell below 1/2."""
    mask = torch.ones_like(log_ratio) if mask is None else mask
    with torch.no_grad():
        log_w = (log_ratio.clamp(-20.0, 20.0) * mask).sum(dim=-1, keepdim=True).clamp(*_VESPO_LOG_W)
        nonneg = adv >= 0
        k = torch.where(nonneg, k_pos, k_neg).to(log_ratio.dtype)
        lam = torch.where(nonneg, lambda_pos, lambda_neg).to(log_ratio.dtype)
        phi = torch.exp(lam + k * log_w - lam * torch.exp(log_w)).nan_to_num(nan=0.0, posinf=0.0, neginf=0.0)
    return -phi * adv * log_ratio, {"weight_low": (phi < 0.5).to(adv.dtype)}


def _dppo(log_ratio: Tensor, adv: Tensor, old_logp: Tensor | None, clip_c: float, outside: Tensor):
    """DPPO's loss given the tokens `outside` its trust region: -sg(min(r, C)) A log r on the others."""
    inside = (~outside).to(adv.dtype)
    weight = torch.exp(log_ratio.detach().clamp(-20.0, 20.0)).clamp(max=clip_c)
    return -weight * adv * log_ratio * inside, {"masked": outside.to(adv.dtype)}


def _probs(log_ratio: Tensor, old_logp: Tensor | None) -> tuple[Tensor, Tensor]:
    if old_logp is None:
        raise ValueError("the DPPO surrogates need the behaviour log-probs old_logp (B, T)")
    return torch.exp(old_logp + log_ratio.detach()), torch.exp(old_logp)


def dppo_tv(log_ratio: Tensor, adv: Tensor, mask: Tensor | None = None, old_logp: Tensor | None = None, *,
            eps_low: float, eps_high: float, clip_c: float) -> tuple[Tensor, dict[str, Tensor]]:
    """DPPO-Binary-TV (arXiv:2602.04879, verl's `dppo_tv`): the trust region is on the sampled
    token's probability, not its ratio. With p = pi(y_t), p_old = pi_old(y_t):

        outside_t = p - p_old > eps_high   if A_t > 0,   p - p_old < -eps_low   otherwise
        loss_t = -sg(min(r_t, clip_c)) A_t log r_t   (0 where outside)

    A rare token may grow many-fold in ratio while moving little probability, so it keeps its
    gradient where PPO's clip would cut it; a likely token is stopped after a small absolute
    move. eps_* are total-variation thresholds here (verl reads them from clip_ratio_low /
    _high); clip_c truncates the IS weight (the paper recommends a large one). Needs the token
    ratio level. verl writes log pi (a no-gradient difference). `masked` marks dropped tokens."""
    p, p_old = _probs(log_ratio, old_logp)
    outside = torch.where(adv > 0, p - p_old > eps_high, p - p_old < -eps_low)
    return _dppo(log_ratio, adv, old_logp, clip_c, outside)


def dppo_kl(log_ratio: Tensor, adv: Tensor, mask: Tensor | None = None, old_logp: Tensor | None = None, *,
            eps_low: float, eps_high: float, clip_c: float) -> tuple[Tensor, dict[str, Tensor]]:
    """DPPO-Binary-KL (arXiv:2602.04879, verl's `dppo_kl`): as `dppo_tv`, with the KL between
    the two Bernoulli distributions "y_t or not" as the divergence,

        D_t = p_old log(p_old / p) + (1 - p_old) log((1 - p_old + 1e-8) / (1 - p + 1e-8))
        outside_t = D_t > eps_high and p > p_old   if A_t > 0,   D_t > eps_low and p < p_old   otherwise

    (a move against the advantage's direction is never outside). 1e-8 is verl's guard."""
    p, p_old = _probs(log_ratio, old_logp)
    log_p = old_logp + log_ratio.detach()
    binary_kl = p_old * (old_logp - log_p) + (1 - p_old) * torch.log((1.0 - p_old + 1e-8) / (1.0 - p + 1e-8))
    # written as "not inside" so that a NaN divergence (p > 1 from a positive log-prob) drops the token
    inside = torch.where(adv > 0, (binary_kl <= eps_high) | (p <= p_old), (binary_kl <= eps_low) | (p >= p_old))
    outside = ~inside
    return _dppo(log_ratio, adv, old_logp, clip_c, outside)


SURROGATES: dict[str, Surrogate] = names.SURROGATE.bind({
    "ppo_clip": ppo_clip,
    "dual_clip": dual_clip,
    "cispo": cispo,
    "sapo": sapo,
    "gmpo": gmpo,
    "reinforce": reinforce,
    "dro": dro,
    "vespo": vespo,
    "dppo_tv": dppo_tv,
    "dppo_kl": dppo_kl,
}, table="SURROGATES")
