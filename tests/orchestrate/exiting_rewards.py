"""Reward functions that try to end the process, for tests/orchestrate/test_reward_exits.py
(named as `reward.function = "exiting_rewards:..."` with this folder on sys.path)."""

import sys


def exits_zero(response, gold):
    sys.exit(0)


def exits_three(response, gold):
    raise SystemExit(3)


def exits_on_the_second_call(response, gold, _calls=[0]):
    _calls[0] += 1
    if _calls[0] % 2 == 0:
        sys.exit(0)
    return 1.0
