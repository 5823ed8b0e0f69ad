"""The reward-vs-compute sigmoid of RL training (ScaleRL, Khatri et al. 2025, arXiv:2510.13786, eq. 1):

    R(C) = R0 + (A - R0) / (1 + (C_mid / C)^B)

R0 is the reward before training (the limit as C -> 0), A the asymptote (the ceiling as
C -> inf), B > 0 the steepness in log-compute ("efficiency"), and C_mid the compute at which
half of the gain A - R0 is reached. Written in log-compute it is a logistic curve,

    R(C) = R0 + (A - R0) * sigma(B * (ln C - ln C_mid)),      sigma(z) = 1 / (1 + e^-z),

which is how it is evaluated (no overflow of (C_mid / C)^B for large B) and fitted (ln C_mid
is far better conditioned than C_mid).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit


def sigmoid_reward(compute: np.ndarray, r0: float, a: float, b: float, c_mid: float) -> np.ndarray:
    """R(C) for compute (N,) > 0 → (N,)."""
    return log_sigmoid_reward(np.log(np.asarray(compute, dtype=np.float64)), r0, a, b, np.log(c_mid))


def log_sigmoid_reward(log_c: np.ndarray, r0: float, a: float, b: float, log_c_mid: float) -> np.ndarray:
    """R as a function of ln C (N,) with the midpoint given as ln C_mid → (N,)."""
    return r0 + (a - r0) * expit(b * (np.asarray(log_c, dtype=np.float64) - log_c_mid))


def compute_at_gain(fraction: float, b: float, c_mid: float) -> float:
    """The compute at which R0 + fraction * (A - R0) is reached, 0 < fraction < 1:

        1 / (1 + (C_mid / C)^B) = f   <=>   C = C_mid * (f / (1 - f))^(1 / B)

    e.g. fraction 0.5 gives C_mid, fraction 0.9 gives C_mid * 9^(1/B)."""
    if not 0 < fraction < 1:
        raise ValueError(f"fraction must be in (0, 1), got {fraction}")
    return float(c_mid * (fraction / (1.0 - fraction)) ** (1.0 / b))
