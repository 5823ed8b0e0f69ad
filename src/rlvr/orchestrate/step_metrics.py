"""Metrics of one step's rollouts and rewards (definitions in docs/metrics.md)."""

from __future__ import annotations

import statistics

from rlvr.algo.filters import ZERO_VARIANCE_ATOL
from rlvr.rewards.cot_monitor import CotMonitor
from rlvr.types import Scored


def rollout_metrics(groups: list[list[Scored]]) -> dict[str, float]:
    flat = [s for g in groups for s in g]
    rewards = [s.reward for s in flat]
    lengths = [len(s.rollout.completion_ids) for s in flat]
    correct = [n for s, n in zip(flat, lengths) if s.reward >= 1.0]
    wrong = [n for s, n in zip(flat, lengths) if s.reward < 1.0]
    zero_var = sum(1 for g in groups if _spread(g) <= ZERO_VARIANCE_ATOL)  # the filter's rule
    return {
        "reward/mean": statistics.fmean(rewards),
        "reward/std": statistics.pstdev(rewards) if len(rewards) > 1 else 0.0,
        "reward/accuracy": sum(r >= 1.0 for r in rewards) / len(rewards),
        "response/length_mean": statistics.fmean(lengths),
        "response/length_max": max(lengths),
        "response/length_correct_mean": statistics.fmean(correct) if correct else float("nan"),
        "response/length_wrong_mean": statistics.fmean(wrong) if wrong else float("nan"),
        "response/truncated_frac": sum(s.rollout.finish_reason == "length" for s in flat) / len(flat),
        "response/empty_frac": sum(not s.rollout.text.strip() for s in flat) / len(flat),
        "groups/zero_variance_frac": zero_var / len(groups),
    }


def _spread(group: list[Scored]) -> float:
    rewards = [s.reward for s in group]
    return max(rewards) - min(rewards)


def sample_rows(groups: list[list[Scored]], step: int, limit: int) -> list[dict]:
    """A few rollouts of the step for samples.jsonl: the first member of the first groups, then
    up to `limit` more whose reasoning the CoT monitor flags (`cot_flags`, cot_monitor.py). `source`
    is where the sample's row came from (Sample.source: "data.jsonl:12", "arithmetic/train#3"). An
    episode's row also holds its trajectory (`episode`; `completion` is its last turn)."""
    monitor, rows = CotMonitor(), []
    chosen = [s for g in groups for s in g[:1]][:limit]
    taken = {id(s) for s in chosen}
    chosen += [s for g in groups for s in g if id(s) not in taken and monitor.flags(s.rollout.text)][:limit]
    for s in chosen:
        rows.append({"step": step, "source": s.sample.source, "prompt": s.sample.prompt, "gold": s.sample.answer,
                     "completion": s.rollout.text, "finish": s.rollout.finish_reason,
                     "reward": s.reward, "reason": s.reason, "flags": list(s.flags),
                     "cot_flags": monitor.flags(s.rollout.text)})
        if s.episode is not None:  # a multi-turn episode: its whole trajectory (rlvr.envs.scored)
            rows[-1]["episode"] = s.episode
    return rows


def staleness_metrics(groups: list[list[Scored]], trained_version: int) -> dict[str, float]:
    """How many policy versions each sample lags the weights it is trained from.

    A sample's staleness counts from its oldest token; with in-flight weight updates its later
    tokens are fresher, which the token mean shows. The token mean counts the policy's own
    tokens only: an episode's observation tokens carry the version before them but were not
    sampled (their loss mask is 0)."""
    rollouts = [s.rollout for g in groups for s in g]
    if not rollouts:
        return {}
    per_sample = [trained_version - r.policy_version for r in rollouts]
    per_token = [trained_version - v for r in rollouts for v in _sampled_versions(r)]
    # The max over samples is `async/staleness` (the loop logs it from the batch's oldest token).
    return {"async/staleness_mean": statistics.fmean(per_sample),
            "async/token_staleness_mean": statistics.fmean(per_token) if per_token else 0.0,
            "async/inflight_mixed_frac": sum(bool(r.token_versions) for r in rollouts) / len(rollouts)}


def _sampled_versions(rollout) -> list[int]:
    versions = rollout.token_versions or (rollout.policy_version,) * len(rollout.completion_ids)
    if not rollout.loss_mask:
        return list(versions)
    return [v for v, m in zip(versions, rollout.loss_mask) if m]


def policy_tokens(rollout) -> int:
    """The tokens the policy sampled: a multi-turn episode's completion also holds the
    environment's tokens, which its loss mask marks 0; a truncated completion counts whole."""
    return sum(rollout.loss_mask) if rollout.loss_mask else len(rollout.completion_ids)


COMPUTE_KEYS = ("compute/tokens_generated", "compute/tokens_trained", "compute/flops")


def add_compute(totals: dict[str, float], batch, generated: int, n_params: int, updates: int,
                has_ref: bool) -> dict[str, float]:
    """Cumulative compute after training on `batch`, whose rollouts sampled `generated`
    completion tokens (those the loss masks out included), approximated as 2 FLOPs per
    parameter per token forward and 6 forward + backward (P = all parameters): generation runs
    prompt + completion tokens forward once, training runs them forward and backward per
    update, a reference model forward once. Updates `totals` in place and returns a copy."""
    seen = float(batch.attention_mask.sum())
    totals["compute/tokens_generated"] += float(generated)
    totals["compute/tokens_trained"] += seen * updates
    totals["compute/flops"] += n_params * seen * (2.0 + 6.0 * updates + 2.0 * (1.0 if has_ref else 0.0))
    return dict(totals)
