"""The steps of the batch chain (`rlvr.orchestrate.batch_builder.build_batch`), one function
each, with the options of each step in its own small frozen spec (orchestrate/batch_spec.py).

Every step takes tensors and plain values and returns tensors (and a metrics dict where it
logs something); only `completion_logprobs` and `critic_values` run a model. Shapes: B rows,
T completion columns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Protocol

import torch

from rlvr import names
from rlvr.algo import outcome_advantages
from rlvr.algo.engine_mismatch import MISMATCH_CORRECTIONS, mismatch_kl
from rlvr.algo.entropy_control import COV_SELECTIONS
from rlvr.algo.gae import decoupled_gae, length_adaptive_lambda
from rlvr.algo.imitation import positive_lm_weights
from rlvr.algo.kl import kl_reward_penalty
from rlvr.algo.returns import masked_whiten, outcome_token_rewards, reinforce_pp_advantages
from rlvr.algo.shaping import overlong_penalty, truncation_mask
from rlvr.train.batching import collate
from rlvr.orchestrate.batch_spec import AdvantageSpec, CovSpec, KLSpec, MismatchSpec, check_name
from rlvr.train.logprobs import batch_logprobs
from rlvr.types import Batch, Scored

Tensor = torch.Tensor


class Critic(Protocol):
    """What the chain needs of a value model (`rlvr.train.critic.CriticTrainer`)."""

    def values(self, batch: Batch) -> Tensor: ...  # (B, T), no gradient


# --- collate --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Outcomes:
    """Per-row facts of the rollouts that the chain reads beside the batch's tensors.

    rewards:   (B,) float32, the verifier's reward (before any shaping)
    lengths:   (B,) long, completion tokens sampled
    truncated: (B,) bool, the rollout stopped at the budget (finish reason `length`)
    token_adv: (B, T) float32, advantages the rows brought (per-turn credit, rlvr.envs.credit),
               0 on padding; None when no row did (then algo.advantage computes them)
    """

    rewards: Tensor
    lengths: Tensor
    truncated: Tensor
    token_adv: Optional[Tensor] = None


def collate_groups(groups: list[list[Scored]], pad_id: int) -> tuple[Batch, Outcomes]:
    """Groups of scored rollouts → the padded batch (adv 0, group_ids the group's index) and the
    rows' outcomes, in the order of the groups and of their members."""
    flat = [s for g in groups for s in g]
    group_ids = torch.tensor([i for i, g in enumerate(groups) for _ in g])
    batch = collate([s.rollout for s in flat], torch.zeros(len(flat)), group_ids, pad_id)
    outcomes = Outcomes(rewards=torch.tensor([s.reward for s in flat], dtype=torch.float32),
                        lengths=torch.tensor([len(s.rollout.completion_ids) for s in flat]),
                        truncated=torch.tensor([s.rollout.finish_reason == "length" for s in flat]),
                        token_adv=carried_advantages(flat, batch.completion_mask.shape[1]))
    return batch, outcomes


def carried_advantages(flat: list[Scored], t: int) -> Optional[Tensor]:
    """(B, T) the rows' own per-token advantages, or None when no row carries any; a batch
    where only some rows do is refused (their advantages would not be comparable)."""
    carried = [s.token_adv is not None for s in flat]
    if not any(carried):
        return None
    if not all(carried):
        raise ValueError(f"{sum(carried)} of {len(flat)} rows carry per-token advantages (Scored.token_adv): "
                         "all or none must")
    adv = torch.zeros((len(flat), t))
    for i, s in enumerate(flat):
        if len(s.token_adv) != len(s.rollout.completion_ids):
            raise ValueError(f"row {i}: {len(s.token_adv)} advantages for {len(s.rollout.completion_ids)} tokens")
        adv[i, :len(s.token_adv)] = torch.tensor(s.token_adv, dtype=torch.float32)
    return adv


def kept_set_metrics(batch: Batch, sampling_mask: str) -> dict[str, float]:
    """The mean kept-set size of the sampled tokens under sampling-mask replay, else nothing.
    Replay without kept sets (rollouts whose engine or environment did not record them) is
    refused: the engine's log-probs would be of the truncated distribution and the trainer's
    of the full one."""
    check_name(names.SAMPLING_MASK, sampling_mask)
    if sampling_mask == "none":
        return {}
    if batch.support is None:
        raise ValueError("algo.sampling_mask = 'replay', but no rollout of the batch recorded its kept sets "
                         "(Rollout.support): only the hf engine's single-turn rollouts do")
    sampled = (batch.support > 0) & (batch.completion_mask > 0)
    return {"sampling/kept_set_mean": float(batch.support[sampled].float().mean()) if sampled.any() else 0.0}


# --- shaped rewards -------------------------------------------------------------------------

def shaped_rewards(rewards: Tensor, lengths: Tensor, *, max_new_tokens: int,
                   overlong_cache: Optional[int]) -> tuple[Tensor, dict[str, float]]:
    """DAPO's soft overlong punishment (arXiv:2503.14476 eq. 13) added to the rewards when
    `overlong_cache` is set. (B,), (B,) → (B,) rewards and the penalty's mean as a metric."""
    if overlong_cache is None:
        return rewards, {}
    penalty = overlong_penalty(lengths, max_len=max_new_tokens, cache_len=overlong_cache).float()
    return rewards + penalty, {"reward/overlong_penalty_mean": float(penalty.mean())}


# --- log-probs from a model -------------------------------------------------------------------

def completion_logprobs(model, batch: Batch, temperature: float) -> Tensor:
    """(B, T) log-probs of the batch's completion tokens under `model`, 0 on padding, no gradient."""
    with torch.no_grad():
        return batch_logprobs(model, batch, temperature) * batch.completion_mask


def critic_values(critic: Critic, batch: Batch) -> Tensor:
    """(B, T) the critic's values, 0 on padding."""
    return critic.values(batch) * batch.completion_mask


# --- mismatch weights -----------------------------------------------------------------------

def mismatch_weights(trainer_logp: Tensor, engine_logp: Tensor, mask: Tensor,
                     spec: MismatchSpec) -> tuple[Tensor, dict[str, float]]:
    """The per-token weight pi_old / mu (truncated or masked by `spec.kind`) of the trainer's
    log-probs against the engine's, and its metrics. (B, T) each → (B, T). Not for kind none."""
    weight = MISMATCH_CORRECTIONS[spec.kind](trainer_logp, engine_logp, mask, cap=spec.cap, low=spec.low)
    tokens = mask.sum().clamp(min=1)
    return weight, {"mismatch/kl": float(mismatch_kl(trainer_logp, engine_logp, mask)),
                    "mismatch/weight_mean": float((weight * mask).sum() / tokens),
                    "mismatch/capped_frac": float(((weight >= spec.cap) * mask).sum() / tokens),
                    "mismatch/masked_frac": float(((weight == 0) * mask).sum() / tokens)}


# --- KL in the reward -----------------------------------------------------------------------

def kl_in_reward(old_logp: Tensor, ref_logp: Tensor, mask: Tensor,
                 spec: KLSpec) -> tuple[Optional[Tensor], dict[str, float]]:
    """The per-token penalty coef * KL_t(pi_old || pi_ref) that the advantages subtract from the
    rewards (arXiv:2203.02155 eq. 2), when the KL is placed in the reward; else None.
    (B, T) each → (B, T) and the mean summed penalty of a row as a metric."""
    if spec.placement != "reward" or spec.estimator == "none":
        return None, {}
    penalty = kl_reward_penalty(old_logp, ref_logp, mask, estimator=spec.estimator, coef=spec.coef,
                                clamp=spec.clamp)
    return penalty, {"reward/kl_penalty_mean": float(penalty.sum(1).mean())}


# --- advantages -----------------------------------------------------------------------------

# Every advantage: (rewards (B,), kl_penalty (B, T) or None, mask (B, T), group_ids (B,),
# values (B, T) or None, spec) → (advantages (B, T), critic targets (B, T) or None).
AdvantageFn = Callable[[Tensor, Optional[Tensor], Tensor, Tensor, Optional[Tensor], AdvantageSpec],
                       tuple[Tensor, Optional[Tensor]]]


def group_advantages(rewards, kl_penalty, mask, group_ids, values, spec):
    """GRPO family: the sequence's reward minus its summed KL penalty, baseline then scale, one
    value a completion spread over its tokens."""
    r = rewards if kl_penalty is None else rewards - kl_penalty.sum(1)
    adv = outcome_advantages(r, group_ids, baseline=spec.baseline, scale=spec.scale, eps=spec.eps,
                             lengths=mask.sum(1))
    return adv[:, None] * mask, None


def reinforce_pp(rewards, kl_penalty, mask, group_ids, values, spec):
    """REINFORCE++(-baseline): token returns with the KL per token, whitened over the batch."""
    return reinforce_pp_advantages(rewards, group_ids, mask, baseline=spec.baseline, kl_penalty=kl_penalty,
                                   gamma=spec.gamma), None


def gae(rewards, kl_penalty, mask, group_ids, values, spec):
    """PPO / VAPO: the outcome reward on the last token minus the KL per token, the critic's
    values, decoupled GAE (lam for the policy, lam_critic for the critic's targets; VAPO's
    length-adaptive lam when lam_alpha is set), advantages whitened over the batch."""
    if values is None:
        raise ValueError("algo.advantage = 'gae' needs a critic (BatchModels.critic is None)")
    token_rewards = outcome_token_rewards(rewards, mask)
    if kl_penalty is not None:
        token_rewards = token_rewards - kl_penalty
    lam = spec.lam if spec.lam_alpha is None else length_adaptive_lambda(mask.sum(1), spec.lam_alpha).float()
    adv, targets = decoupled_gae(token_rewards, values, mask, gamma=spec.gamma, lam_policy=lam,
                                 lam_critic=spec.lam if spec.lam_critic is None else spec.lam_critic)
    return masked_whiten(adv, mask), targets


ADVANTAGES: dict[str, AdvantageFn] = names.ADVANTAGE.bind(
    {"group": group_advantages, "reinforce_pp": reinforce_pp, "gae": gae}, table="ADVANTAGES")


# --- masks and the weights computed on the full batch ---------------------------------------

def mask_truncated_rows(mask: Tensor, truncated: Tensor) -> tuple[Tensor, dict[str, float]]:
    """DAPO's overlong filtering: the truncated rows leave the loss. (B, T), (B,) bool → (B, T)."""
    return truncation_mask(truncated, mask), {"response/masked_truncated": float(truncated.sum())}


def imitation_weights(mask: Tensor, rewards: Tensor, coef: float) -> Optional[Tensor]:
    """VAPO's positive-example LM weights (arXiv:2504.05118 eq. 9) on the rows whose verifier
    reward is 1, when the term is on (coef > 0); else None. (B, T), (B,) → (B, T)."""
    return positive_lm_weights(mask, rewards) if coef else None


def covariance_selection(adv: Tensor, old_logp: Tensor, mask: Tensor, spec: CovSpec) -> Optional[Tensor]:
    """The tokens Clip-Cov / KL-Cov act on, chosen on the full batch; None without entropy
    control. (B, T) each → (B, T). clip_cov draws from the global RNG (checkpointed)."""
    if spec.kind == "none":
        return None
    return COV_SELECTIONS[spec.kind](adv, old_logp, mask, ratio=spec.ratio, low=spec.low, high=spec.high)

