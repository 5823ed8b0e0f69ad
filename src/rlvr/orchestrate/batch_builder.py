"""Scored groups → the training batch: reward shaping, KL in the reward, advantages, masks.

The order (each step optional, set by the recipe):
  0. mismatch          pi_old recomputed by the trainer, truncated or masked IS weights vs the engine
  1. overlong shaping    r_i += overlong_penalty(|y_i|)               (DAPO eq. 13)
  2. reference log-probs when the recipe has a KL term
  3. KL in the reward    per-token beta * KL_t(pi_old || pi_ref)     (subtracted from rewards)
  4. advantages          group: baseline then scale, one value a completion
                         reinforce_pp: token returns whitened over the batch
                         gae: the critic's values, decoupled GAE, whitened
  5. truncation mask     completions cut at the budget leave the loss (DAPO overlong filtering)
  6. imitation weights   VAPO's positive-example LM loss on the samples with reward 1
  7. covariance tokens   Clip-Cov / KL-Cov's selection, on the full batch from pi_old
"""

from __future__ import annotations

import dataclasses

import torch

from rlvr.algo import outcome_advantages
from rlvr.algo.engine_mismatch import MISMATCH_CORRECTIONS, mismatch_kl
from rlvr.algo.entropy_control import COV_SELECTIONS
from rlvr.algo.kl import kl_reward_penalty
from rlvr.algo.gae import decoupled_gae, length_adaptive_lambda
from rlvr.algo.imitation import positive_lm_weights
from rlvr.algo.returns import masked_whiten, outcome_token_rewards, reinforce_pp_advantages
from rlvr.algo.shaping import overlong_penalty, truncation_mask
from rlvr.config import Config
from rlvr.engines.loading import pad_token_id
from rlvr.train.batching import collate
from rlvr.train.logprobs import batch_logprobs
from rlvr.types import Batch, Scored


def shaped_rewards(flat: list[Scored], config: Config) -> tuple[torch.Tensor, dict[str, float]]:
    """(B,) rewards after overlong shaping, and the shaping's metric."""
    rewards = torch.tensor([s.reward for s in flat], dtype=torch.float32)
    s = config.sampling
    if s.overlong_cache is None:
        return rewards, {}
    lengths = torch.tensor([len(x.rollout.completion_ids) for x in flat])
    penalty = overlong_penalty(lengths, max_len=s.max_new_tokens, cache_len=s.overlong_cache).float()
    return rewards + penalty, {"reward/overlong_penalty_mean": float(penalty.mean())}


def correct_mismatch(batch: Batch, config: Config, parts, metrics: dict) -> tuple[Batch, dict]:
    """With `algo.mismatch` set: the trainer's own log-probs become pi_old, and each token gets
    the truncated weight pi_old / mu against the engine's log-probs mu."""
    a = config.algo
    if a.mismatch == "none":
        return batch, metrics
    mask = batch.completion_mask
    with torch.no_grad():
        trainer_logp = batch_logprobs(parts.model, batch, config.sampling.temperature) * mask
    weight = MISMATCH_CORRECTIONS[a.mismatch](trainer_logp, batch.old_logp, mask, cap=a.mismatch_cap,
                                              low=a.mismatch_low)
    tokens = mask.sum().clamp(min=1)
    metrics = {**metrics, "mismatch/kl": float(mismatch_kl(trainer_logp, batch.old_logp, mask)),
               "mismatch/weight_mean": float((weight * mask).sum() / tokens),
               "mismatch/capped_frac": float(((weight >= a.mismatch_cap) * mask).sum() / tokens),
               "mismatch/masked_frac": float(((weight == 0) * mask).sum() / tokens)}
    return dataclasses.replace(batch, old_logp=trainer_logp, is_weight=weight), metrics


def build_batch(groups: list[list[Scored]], config: Config, parts):
    """→ (batch, metrics of the shaping, (values, targets) for the critic or None)."""
    a = config.algo
    flat = [s for g in groups for s in g]
    group_ids = torch.tensor([i for i, g in enumerate(groups) for _ in g])
    rewards, metrics = shaped_rewards(flat, config)
    batch = collate([s.rollout for s in flat], torch.zeros(len(flat)), group_ids, pad_token_id(parts.tokenizer))
    batch, metrics = correct_mismatch(batch, config, parts, metrics)
    mask = batch.completion_mask
    ref = None
    if parts.ref_model is not None:
        with torch.no_grad():
            ref = batch_logprobs(parts.ref_model, batch, config.sampling.temperature) * mask
    penalty = None
    if ref is not None and a.kl_placement == "reward":
        penalty = kl_reward_penalty(batch.old_logp, ref, mask, estimator=a.kl, coef=a.kl_coef, clamp=a.kl_clamp)
        metrics["reward/kl_penalty_mean"] = float(penalty.sum(1).mean())
    critic = None
    if a.advantage == "group":
        r = rewards if penalty is None else rewards - penalty.sum(1)
        adv = outcome_advantages(r, group_ids, baseline=a.baseline, scale=a.scale, eps=a.adv_eps)[:, None] * mask
    elif a.advantage == "reinforce_pp":
        adv = reinforce_pp_advantages(rewards, group_ids, mask, baseline=a.baseline, kl_penalty=penalty, gamma=a.gamma)
    else:
        adv, critic = gae_with_critic(batch, rewards, penalty, config, parts)
    if config.sampling.mask_truncated:
        truncated = torch.tensor([s.rollout.finish_reason == "length" for s in flat])
        mask = truncation_mask(truncated, mask)
        metrics["response/masked_truncated"] = float(truncated.sum())
    lm_weight = None
    if a.positive_lm_coef:  # the verifier's reward, before shaping: "correct" means a full pass
        lm_weight = positive_lm_weights(mask, torch.tensor([s.reward for s in flat]))
    adv = adv * mask
    cov_select = None
    if a.entropy_control != "none":
        cov_select = COV_SELECTIONS[a.entropy_control](adv, batch.old_logp, mask, ratio=a.cov_ratio, low=a.cov_low,
                                                       high=a.cov_high)  # clip_cov: the global RNG, checkpointed
    return (dataclasses.replace(batch, adv=adv, completion_mask=mask, ref_logp=ref, lm_weight=lm_weight,
                                cov_select=cov_select), metrics, critic)


def gae_with_critic(batch: Batch, rewards: torch.Tensor, penalty, config: Config, parts):
    """PPO / VAPO advantages: the outcome reward on the last token (minus any KL in the reward),
    the critic's values, decoupled GAE (lam for the policy, lam_critic for the targets; VAPO's
    length-adaptive lam when lam_alpha is set), then whitened. Returns the advantages and
    (values, targets) for the critic's step."""
    a, mask = config.algo, batch.completion_mask
    token_rewards = outcome_token_rewards(rewards, mask)
    if penalty is not None:
        token_rewards = token_rewards - penalty
    values = parts.critic.values(batch) * mask
    lam = a.lam if a.lam_alpha is None else length_adaptive_lambda(mask.sum(1), a.lam_alpha).float()
    adv, targets = decoupled_gae(token_rewards, values, mask, gamma=a.gamma, lam_policy=lam,
                                 lam_critic=a.lam if a.lam_critic is None else a.lam_critic)
    return masked_whiten(adv, mask), (values, targets)
