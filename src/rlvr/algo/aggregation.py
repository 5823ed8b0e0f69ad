"""How per-token losses become one scalar: as per-token weights over the whole batch.

Each function maps the completion mask (B, T) (and the group ids (B,)) of the *whole* batch to
weights W (B, T), and the loss is sum(W * per_token_loss). Computing W once on the full batch
is what makes micro-batching exact: the loss of a micro-batch is the sum over its rows, and
the micro-batch gradients add up to the full-batch gradient for every mode.

Rows (or groups) with no unmasked token get weight 0 and are not counted in any denominator,
so a fully masked row never changes the result.
"""

from __future__ import annotations

from typing import Callable

import torch

from rlvr import names

Tensor = torch.Tensor


def _nonempty(counts: Tensor) -> Tensor:
    return (counts > 0).sum().clamp(min=1)


def token_mean(mask: Tensor, group_ids: Tensor, constant: float) -> Tensor:
    """DAPO (arXiv:2503.14476 eq. 8): every token in the batch weighs 1 / (total tokens)."""
    return mask / mask.sum().clamp(min=1)


def seq_mean_token_mean(mask: Tensor, group_ids: Tensor, constant: float) -> Tensor:
    """GRPO (arXiv:2402.03300 eq. 3): mean over each sequence's tokens, then over sequences."""
    lengths = mask.sum(dim=1, keepdim=True)
    return mask / lengths.clamp(min=1) / _nonempty(lengths)


def seq_mean_token_sum_norm(mask: Tensor, group_ids: Tensor, constant: float) -> Tensor:
    """Dr. GRPO (arXiv:2503.20783): sum each sequence's tokens, divide by a constant C (the
    generation budget, not the padded width), then mean over non-empty sequences."""
    lengths = mask.sum(dim=1)
    return mask / constant / _nonempty(lengths)


def token_sum(mask: Tensor, group_ids: Tensor, constant: float) -> Tensor:
    """verl's `token-sum`: every token weighs 1, no normalisation. The loss then scales with the
    batch's token count (a larger batch is a larger step), so pair it with a smaller lr."""
    return mask.clone()


def prompt_mean(mask: Tensor, group_ids: Tensor, constant: float) -> Tensor:
    """ScaleRL (arXiv:2510.13786): token mean within each prompt's group, then mean over
    prompts."""
    n_groups = int(group_ids.max()) + 1 if group_ids.numel() else 0
    row_tokens = mask.sum(dim=1)
    group_tokens = torch.zeros(n_groups, dtype=mask.dtype).index_add_(0, group_ids, row_tokens)
    per_row = group_tokens[group_ids].clamp(min=1).unsqueeze(1)
    return mask / per_row / _nonempty(group_tokens)


AGGREGATIONS: dict[str, Callable[[Tensor, Tensor, float], Tensor]] = names.AGGREGATION.bind({
    "token_mean": token_mean,
    "seq_mean_token_mean": seq_mean_token_mean,
    "seq_mean_token_sum_norm": seq_mean_token_sum_norm,
    "prompt_mean": prompt_mean,
    "token_sum": token_sum,
}, table="AGGREGATIONS")
