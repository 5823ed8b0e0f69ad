"""`staleness_metrics` (orchestrate/step_metrics.py) by hand: the token mean counts the tokens
the policy sampled, not an episode's observation tokens (loss mask 0)."""

from __future__ import annotations

import pytest

from rlvr.orchestrate.step_metrics import staleness_metrics
from rlvr.types import Rollout, Sample, Scored

TASK = Sample(prompt="q", answer="a")


def scored(versions, mask=(), first=None):
    n = len(versions)
    rollout = Rollout(prompt_ids=(1,), completion_ids=tuple(range(n)), logprobs=(0.0,) * n, text="x",
                      finish_reason="stop", policy_version=versions[0] if first is None else first,
                      token_versions=tuple(versions), loss_mask=tuple(mask))
    return Scored(TASK, rollout, 0.0, "")


def test_observation_tokens_do_not_count_in_the_token_mean():
    # turn 1 on version 1 (2 tokens), an observation (3 tokens, tagged 1), turn 2 on version 2 (1 token)
    episode = scored([1, 1, 1, 1, 1, 2], mask=[1, 1, 0, 0, 0, 1])
    m = staleness_metrics([[episode]], trained_version=3)
    assert m["async/staleness_mean"] == 2
    assert m["async/token_staleness_mean"] == pytest.approx((2 + 2 + 1) / 3)
    assert m["async/inflight_mixed_frac"] == 1.0


def test_a_single_turn_rollout_counts_every_token():
    plain = Rollout(prompt_ids=(1,), completion_ids=(5, 6), logprobs=(0.0, 0.0), text="x",
                    finish_reason="stop", policy_version=2)
    m = staleness_metrics([[Scored(TASK, plain, 1.0, ""), scored([1, 2, 2])]], trained_version=3)
    assert m["async/token_staleness_mean"] == pytest.approx((1 + 1 + 2 + 1 + 1) / 5)
    assert m["async/inflight_mixed_frac"] == 0.5
