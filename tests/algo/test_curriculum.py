"""Tests for rlvr.algo.curriculum: ScaleRL's no-positive-resampling (arXiv:2510.13786): a prompt
whose latest pass rate reaches 0.9 (ScaleRL: ">= 0.9") is retired for good; the state survives a resume."""

from __future__ import annotations

import json

import pytest

from rlvr.algo.curriculum import PassRateTracker


def test_retires_at_the_threshold_not_below_it():
    t = PassRateTracker(threshold=0.9)
    assert t.update("a", [1.0] * 8 + [0.0] * 2) is False  # 8/10 = 0.8
    assert t.update("b", [1.0] * 15 + [0.0]) is True  # 15/16 = 0.9375
    assert t.update("c", [1.0] * 9 + [0.0]) is True  # 9/10 = 0.9: at the threshold, retired
    assert t.update("b", [1.0] * 16) is False  # already retired: not newly
    assert t.pass_rate("a") == 0.8 and t.is_retired("b") and t.is_retired("c") and not t.is_retired("a")
    assert t.active(["a", "b", "c"]) == ["a"]
    assert t.metrics() == {"curriculum/retired": 2.0, "curriculum/seen": 3.0}


def test_latest_group_counts_not_history():
    t = PassRateTracker()
    t.update("a", [0.0] * 8)
    assert t.update("a", [1.0] * 8) is True


def test_partial_rewards_below_success_do_not_pass():
    t = PassRateTracker(success=1.0)
    assert t.update("a", [0.99] * 8) is False and t.pass_rate("a") == 0.0


def test_state_dict_round_trips_through_json():
    t = PassRateTracker()
    t.update("a", [1.0] * 8)
    t.update("b", [1.0, 0.0])
    restored = PassRateTracker()
    restored.load_state_dict(json.loads(json.dumps(t.state_dict())))
    assert restored.state_dict() == t.state_dict()
    assert restored.is_retired("a") and restored.pass_rate("b") == 0.5


def test_load_refuses_another_threshold():
    with pytest.raises(ValueError, match="threshold=0.9"):
        PassRateTracker(threshold=0.8).load_state_dict(PassRateTracker().state_dict())


def test_rejects_bad_threshold_and_empty_group():
    with pytest.raises(ValueError, match="threshold"):
        PassRateTracker(threshold=0.0)
    with pytest.raises(ValueError, match="empty group"):
        PassRateTracker().update("a", [])
