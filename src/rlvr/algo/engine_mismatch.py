"""Correcting for the gap between the engine's and the trainer's probabilities.

The engine that samples (vLLM, a bf16 kernel, a stale copy) and the trainer that learns do not
compute exactly the same distribution, so the engine's log-probs mu are not the behaviour
policy pi_old the objective assumes. Truncated importance sampling (Yao et al. 2025, "Your
efficient RL framework secretly brings you off-policy RL training") weights each token's loss
by the clipped ratio of the trainer's to the engine's probability of the sampled token:

    token level:     w_t = min(pi_old(y_t) / mu(y_t), C)
    sequence level:  w_i = min(prod_t pi_old(y_t) / mu(y_t), C), the same for every token of y_i

with no gradient through w. Masked importance sampling drops instead of truncating: a token
(or a whole sequence) whose ratio leaves [low, cap] gets weight 0, the others keep their ratio
(IcePop's two-sided token mask, Ling Team 2025, the Ring-1T report; verl's
rollout rejection `token_k1` / `seq_sum_k1` times its IS weight):

    token level:     w_t = rho_t * 1[low <= rho_t <= cap],   rho_t = pi_old(y_t) / mu(y_t)
    sequence level:  w_i = rho_i * 1[low <= rho_i <= cap],   rho_i = prod_t rho_t

A truncated weight still trains on a token the engine and trainer disagree about; a masked one
does not, which is what the 2025 reports on MoE mismatch recommend when the gap is large.
`mismatch_kl` is the k3 estimate of KL(mu || pi_old) per token, the metric that says how large
the gap is. Inputs (B, T); masked positions get weight 1 and KL 0. Every correction takes the
same arguments; `low` is read only by the masked ones.
"""

from __future__ import annotations

from typing import Callable

import torch

from rlvr import names

from rlvr.algo.kl import k3

Tensor = torch.Tensor


def token_tis(trainer_logp: Tensor, engine_logp: Tensor, mask: Tensor, cap: float, low: float = 0.0) -> Tensor:
    log_w = (trainer_logp - engine_logp) * mask
    return torch.exp(log_w).clamp(max=cap).detach()


def sequence_tis(trainer_logp: Tensor, engine_logp: Tensor, mask: Tensor, cap: float, low: float = 0.0) -> Tensor:
    log_w = ((trainer_logp - engine_logp) * mask).sum(dim=1, keepdim=True)
    # Clamp in log space: a long sequence's product overflows long before the cap matters.
    w = torch.exp(log_w.clamp(max=torch.log(torch.tensor(cap, dtype=log_w.dtype))))
    return torch.where(mask.bool(), w.expand_as(mask), torch.ones_like(mask)).detach()


def _masked_weight(log_w: Tensor, mask: Tensor, cap: float, low: float) -> Tensor:
    """rho inside [low, cap], 0 outside, 1 on padding; decided in log space (no overflow)."""
    inside = (log_w >= torch.log(torch.tensor(low, dtype=log_w.dtype))) & (log_w <= torch.log(torch.tensor(cap, dtype=log_w.dtype)))
    w = torch.where(inside, torch.exp(log_w.clamp(max=torch.log(torch.tensor(cap, dtype=log_w.dtype)))),
                    torch.zeros_like(log_w))
    return torch.where(mask.bool(), w.expand_as(mask), torch.ones_like(mask)).detach()


def token_mis(trainer_logp: Tensor, engine_logp: Tensor, mask: Tensor, cap: float, low: float = 0.5) -> Tensor:
    return _masked_weight((trainer_logp - engine_logp) * mask, mask, cap, low)


def sequence_mis(trainer_logp: Tensor, engine_logp: Tensor, mask: Tensor, cap: float, low: float = 0.5) -> Tensor:
    return _masked_weight(((trainer_logp - engine_logp) * mask).sum(dim=1, keepdim=True), mask, cap, low)


MISMATCH_CORRECTIONS: dict[str, Callable[..., Tensor]] = names.MISMATCH.bind({
    "token_tis": token_tis,
    "sequence_tis": sequence_tis,
    "token_mis": token_mis,
    "sequence_mis": sequence_mis,
}, without=("none",), table="MISMATCH_CORRECTIONS")


def mismatch_kl(trainer_logp: Tensor, engine_logp: Tensor, mask: Tensor) -> Tensor:
    """Mean over unmasked tokens of k3(mu || pi_old), a 0-dim tensor (0 for an empty mask)."""
    kl = k3(engine_logp, trainer_logp) * mask
    return kl.sum() / mask.sum().clamp(min=1)
