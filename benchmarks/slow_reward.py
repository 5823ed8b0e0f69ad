"""A reward function that takes 50 ms a call (a remote judge or sandbox), for
benchmarks/reward_concurrency.py (`reward.function = "slow_reward:fifty_ms"`)."""

import time


def fifty_ms(response, gold):
    time.sleep(0.05)
    return float(response.strip() == gold.strip())
