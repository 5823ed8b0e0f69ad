"""Metrics of one step's rollouts and rewards (definitions in docs/metrics.md)."""

from __future__ import annotations

import statistics

from rlvr.types import Scored


def rollout_metrics(groups: list[list[Scored]]) -> dict[str, float]:
    flat = [s for g in groups for s in g]
    rewards = [s.reward for s in flat]
    lengths = [len(s.rollout.completion_ids) for s in flat]
    correct = [n for s, n in zip(flat, lengths) if s.reward >= 1.0]
    wrong = [n for s, n in zip(flat, lengths) if s.reward < 1.0]
    zero_var = sum(1 for g in groups if len({s.reward for s in g}) == 1)
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


def sample_rows(groups: list[list[Scored]], step: int, limit: int) -> list[dict]:
    """A few rollouts of the step for samples.jsonl: the first member of the first groups."""
    rows = []
    for g in groups:
        for s in g[:1]:
            if len(rows) >= limit:
                return rows
            rows.append({"step": step, "prompt": s.sample.prompt, "gold": s.sample.answer,
                         "completion": s.rollout.text, "finish": s.rollout.finish_reason,
                         "reward": s.reward, "reason": s.reason, "flags": list(s.flags)})
    return rows
