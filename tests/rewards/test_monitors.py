"""Monitors on synthetic scored steps: lengths, format-ok-but-wrong, flags, code patterns, drift, warnings."""

from __future__ import annotations

import pytest

from rlvr.rewards.monitors import (
    LengthDrift,
    Monitor,
    Thresholds,
    code_patterns,
    step_monitor_metrics,
)
from rlvr.types import Rollout, Sample, Scored


def scored(reward: float, length: int, text: str = "", flags: tuple[str, ...] = ()) -> Scored:
    rollout = Rollout((1,), tuple(range(length)), (0.0,) * length, text, "stop")
    return Scored(Sample("p", "a"), rollout, reward, "r", flags)


def test_lengths_of_correct_and_incorrect_and_the_gap():
    step = [scored(1.0, 10), scored(1.0, 20), scored(0.0, 40), scored(0.5, 60)]  # 0.5 < correct_at
    m = step_monitor_metrics(step)
    assert (m["monitor/len_correct"], m["monitor/len_incorrect"], m["monitor/len_gap"]) == (15, 50, 35)
    assert step_monitor_metrics(step, correct_at=0.5)["monitor/len_correct"] == 30  # (10+20+60)/3


def test_a_class_with_no_samples_leaves_its_keys_out():
    m = step_monitor_metrics([scored(1.0, 10)])
    assert "monitor/len_incorrect" not in m and "monitor/len_gap" not in m
    assert step_monitor_metrics([]) == {}


def test_format_ok_but_wrong_share():
    boxed = lambda text: "\\boxed{" in text  # noqa: E731
    step = [scored(0.0, 5, "\\boxed{3}"), scored(1.0, 5, "\\boxed{4}"), scored(0.0, 5, "4"), scored(0.0, 5, "\\boxed{1}")]
    assert step_monitor_metrics(step, format_ok=boxed)["monitor/format_ok_wrong"] == 0.5  # 2 of 4
    assert "monitor/format_ok_wrong" not in step_monitor_metrics(step)


def test_flag_counts_once_per_sample_with_watched_flags_always_present():
    step = [scored(0.0, 1, flags=("timeout", "timeout")), scored(0.0, 1, flags=("tampered",)), scored(1.0, 1)]
    m = step_monitor_metrics(step)
    assert m["monitor/samples"] == 3
    assert (m["monitor/flag/timeout"], m["monitor/flag/error"], m["monitor/flag/tests_not_run"]) == (1, 0, 0)
    assert m["monitor/flag/tampered"] == 1


@pytest.mark.parametrize("code,expected", [
    ("import sys\nsys.exit(0)", ["sys_exit"]),
    ("os._exit(1)", ["os_exit"]),
    ("exit()", ["exit_call"]),
    ("quit(0)", ["exit_call"]),
    ("raise unittest.SkipTest('no')", ["skip_test"]),
    ("pytest.skip('later')", ["pytest_skip"]),
    ("sys.modules['unittest'] = fake", ["patch_sys_modules"]),
    ("sys.modules.update(x)", ["patch_sys_modules"]),
    ("import builtins\nbuiltins.print = quiet", ["patch_builtins"]),
    ("__builtins__['len'] = f", ["patch_builtins"]),
    # honest code mentioning similar names is not flagged
    ("def f(x):\n    return sys.modules.get(x) is None or self.exit_code == 0", []),
    ("proc.exit_status; my_exit(1); obj.exit(2)", []),
])
def test_code_patterns(code, expected):
    assert code_patterns(code) == expected


def test_code_pattern_shares():
    step = [scored(1.0, 1, "sys.exit(0)"), scored(1.0, 1, "return 1"), scored(1.0, 1, "os._exit(0); exit()")]
    m = step_monitor_metrics(step)
    assert m["monitor/code/sys_exit"] == pytest.approx(1 / 3)
    assert m["monitor/code/exit_call"] == pytest.approx(1 / 3)
    assert m["monitor/code_flagged"] == pytest.approx(2 / 3)


def lengths(correct: float, incorrect: float) -> dict[str, float]:
    return {"monitor/len_correct": correct, "monitor/len_incorrect": incorrect}


def test_drift_warns_when_incorrect_grows_and_correct_stays_flat():
    drift = LengthDrift(window=4, growth=0.2, flat=0.05)
    warnings = [drift.update(lengths(100, inc)) for inc in (100, 100, 130, 130)]
    assert warnings[:3] == [None, None, None]  # the window is not full yet
    assert warnings[3] is not None and "+30%" in warnings[3]  # (130+130)/(100+100) - 1


def test_no_drift_when_everything_grows_or_nothing_does():
    grow_all = LengthDrift(window=4)
    assert [grow_all.update(lengths(c, c)) for c in (100, 100, 150, 150)][-1] is None
    still = LengthDrift(window=4)
    assert [still.update(lengths(100, i)) for i in (100, 105, 100, 110)][-1] is None  # +7.5% < 20%
    skipped = LengthDrift(window=2)
    assert skipped.update({"monitor/len_correct": 1.0}) is None and not skipped.history


def test_monitor_warns_on_each_crossed_threshold_and_drift():
    monitor = Monitor(Thresholds(format_ok_wrong=0.3, timeout=0.1, error=None), LengthDrift(window=2))
    quiet = {"monitor/samples": 10, "monitor/flag/timeout": 1, "monitor/flag/error": 9,
             "monitor/format_ok_wrong": 0.3, "monitor/code_flagged": 0.0, **lengths(100, 100)}
    assert monitor.check(quiet) == []  # at the threshold is not over it; error check is off
    loud = {**quiet, "monitor/flag/timeout": 2, "monitor/format_ok_wrong": 0.4, "monitor/code_flagged": 0.1,
            "monitor/code/sys_exit": 0.1, "monitor/code/os_exit": 0.0, **lengths(100, 200)}
    warnings = monitor.check(loud)
    assert warnings[0] == "monitor/format_ok_wrong = 0.4 > 0.3"
    assert warnings[1] == "monitor/flag/timeout = 0.2 > 0.1"  # 2 of 10 samples
    assert warnings[2] == "monitor/code_flagged = 0.1 > 0 (sys_exit)"
    assert warnings[3].startswith("length drift")


def test_drift_rejects_bad_settings():
    with pytest.raises(ValueError):
        LengthDrift(window=1)


def test_drift_window_survives_a_resume():
    steps = [lengths(100, inc) for inc in (100, 100, 100, 130, 130, 130)]
    unbroken = LengthDrift(window=6)
    expected = [unbroken.update(m) for m in steps]
    first = Monitor(drift=LengthDrift(window=6))
    got = [first.check(m) for m in steps[:3]]
    resumed = Monitor(drift=LengthDrift(window=6))
    resumed.load_state_dict(first.state_dict())
    got += [resumed.check(m) for m in steps[3:]]
    assert [g[-1] if g else None for g in got] == expected
    assert expected[-1] is not None  # the drift warning fires only with the window restored
    fresh = Monitor(drift=LengthDrift(window=6))
    assert not any(fresh.check(m) for m in steps[3:])
