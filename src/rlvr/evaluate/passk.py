"""pass@k: the chance that at least one of k samples is correct, estimated from n >= k.

Chen et al. 2021 (arXiv:2107.03374, eq. 1): with n samples of a prompt of which c are
correct, the unbiased estimator of pass@k is

    pass@k = 1 - C(n - c, k) / C(n, k).

The binomials overflow for large n, so it is computed as the product

    C(n - c, k) / C(n, k) = prod_{i = n - c + 1}^{n} (1 - k / i),

which is exact in real arithmetic (both sides count the k-subsets that avoid all c correct
samples) and stays in [0, 1] term by term. When n - c < k every k-subset holds a correct
sample and pass@k = 1.
"""

from __future__ import annotations

import numpy as np


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k of one prompt with `c` correct out of `n` samples (0 <= c <= n, 1 <= k <= n)."""
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got c={c}, n={n}")
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n, got k={k}, n={n}")
    if n - c < k:
        return 1.0
    i = np.arange(n - c + 1, n + 1, dtype=np.float64)  # (c,)
    return float(1.0 - np.prod(1.0 - k / i))


def pass_at_k_per_prompt(n: np.ndarray, c: np.ndarray, k: int) -> np.ndarray:
    """pass@k of every prompt: n (P,) samples and c (P,) correct per prompt → (P,) float."""
    return np.array([pass_at_k(int(ni), int(ci), k) for ni, ci in zip(n, c)], dtype=np.float64)
