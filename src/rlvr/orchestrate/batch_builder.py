"""Scored groups → the training batch, as a chain of small steps (`rlvr.orchestrate.batch_steps`).

The order (each step optional, set by the recipe through `BatchSpec`):
  1. collate             left-padded prompts, right-padded completions, group ids (and the
                         kept-set sizes of sampling-mask replay, which the policy's log-probs
                         in the mismatch step and the trainer then renormalise over)
  2. overlong shaping    r_i += overlong_penalty(|y_i|)               (DAPO eq. 13)
  3. mismatch            pi_old recomputed by the trainer, truncated or masked IS weights vs the engine
  4. reference log-probs when there is a reference model (the recipe has a KL term)
  5. KL in the reward    per-token beta * KL_t(pi_old || pi_ref)     (subtracted from rewards)
  6. advantages          ADVANTAGES[kind]: group (baseline then scale, one value a completion),
                         reinforce_pp (token returns whitened over the batch),
                         gae (the critic's values, decoupled GAE, whitened); or the rows'
                         own per-token advantages (env.credit = "per_turn", rlvr.envs.credit)
  7. truncation mask     completions cut at the budget leave the loss (DAPO overlong filtering)
  8. imitation weights   VAPO's positive-example LM loss on the samples with reward 1
  9. masked advantages   adv * mask, so a masked token carries no advantage
 10. covariance tokens   Clip-Cov / KL-Cov's selection, on the full batch from pi_old
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Optional

import torch

from rlvr.orchestrate import batch_steps as steps
from rlvr.orchestrate.batch_spec import AdvantageSpec, BatchSpec, CovSpec, KLSpec, MismatchSpec
from rlvr.orchestrate.batch_steps import ADVANTAGES, Critic
from rlvr.types import Batch, Scored

__all__ = ["ADVANTAGES", "AdvantageSpec", "BatchModels", "BatchSpec", "BuiltBatch", "CovSpec", "KLSpec",
           "MismatchSpec", "build_batch"]


@dataclass(frozen=True)
class BatchModels:
    """What the chain runs at build time. policy: the trainer's model (the mismatch step's
    pi_old); reference: the KL target, None without a KL term; critic: the value model of
    advantage "gae", else None; pad_id: the tokenizer's padding id."""

    policy: torch.nn.Module
    reference: Optional[torch.nn.Module]
    critic: Optional[Critic]
    pad_id: int


@dataclass(frozen=True)
class BuiltBatch:
    """The batch to train on, the chain's metrics, and (values, targets) (B, T) each for the
    critic's step (advantage "gae"), else None."""

    batch: Batch
    metrics: dict[str, float]
    critic_targets: Optional[tuple[torch.Tensor, torch.Tensor]]


def build_batch(groups: list[list[Scored]], spec: BatchSpec, models: BatchModels) -> BuiltBatch:
    """The chain of the module docstring on the batch's groups (every member a row, in order)."""
    batch, outcomes = steps.collate_groups(groups, models.pad_id)
    more = steps.kept_set_metrics(batch, spec.sampling_mask)
    rewards, metrics = steps.shaped_rewards(outcomes.rewards, outcomes.lengths, max_new_tokens=spec.max_new_tokens,
                                            overlong_cache=spec.overlong_cache)
    metrics.update(more)
    if spec.mismatch.kind != "none":
        trainer_logp = steps.completion_logprobs(models.policy, batch, spec.temperature)
        weight, more = steps.mismatch_weights(trainer_logp, batch.old_logp, batch.completion_mask, spec.mismatch)
        batch, metrics = dataclasses.replace(batch, old_logp=trainer_logp, is_weight=weight), {**metrics, **more}
    mask = batch.completion_mask
    ref, penalty = None, None
    if models.reference is not None:
        # the reference (or teacher) over its full vocabulary: the KL is then that of the
        # truncated policy, which sampled, to the reference
        ref = steps.completion_logprobs(models.reference, dataclasses.replace(batch, support=None), spec.temperature)
        penalty, more = steps.kl_in_reward(batch.old_logp, ref, mask, spec.kl)
        metrics.update(more)
    values = None if models.critic is None else steps.critic_values(models.critic, batch)
    if outcomes.token_adv is not None:  # per-turn credit (rlvr.envs.credit): the rows' own
        adv, targets = outcomes.token_adv * mask, None
    else:
        adv, targets = ADVANTAGES[spec.advantage.kind](rewards, penalty, mask, batch.group_ids, values,
                                                       spec.advantage)
    if spec.mask_truncated:
        mask, more = steps.mask_truncated_rows(mask, outcomes.truncated)
        metrics.update(more)
    # The verifier's reward, before shaping: "correct" means a full pass.
    lm_weight = steps.imitation_weights(mask, outcomes.rewards, spec.positive_lm_coef)
    adv = adv * mask
    cov_select = steps.covariance_selection(adv, batch.old_logp, mask, spec.cov)
    batch = dataclasses.replace(batch, adv=adv, completion_mask=mask, ref_logp=ref, lm_weight=lm_weight,
                                cov_select=cov_select)
    return BuiltBatch(batch, metrics, None if targets is None else (values, targets))
