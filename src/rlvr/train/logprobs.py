"""Log-probabilities of completion tokens under a model, by one teacher-forced forward pass."""

from __future__ import annotations

import torch
from transformers import PreTrainedModel

from rlvr.types import Batch


def completion_logits(model: PreTrainedModel, batch: Batch) -> torch.Tensor:
    """Logits (B, T, V) of the positions that predict the completion tokens, in the dtype the
    model's head produces: float32 for a float32 model or one loaded with `model.fp32_head`
    (`rlvr.models.precision`), else the model's dtype.
    """
    positions = (batch.attention_mask.cumsum(-1) - 1).clamp(min=0)
    t = batch.completion_mask.shape[1]
    out = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask,
                position_ids=positions, use_cache=False, logits_to_keep=t + 1)
    # logits_to_keep=t+1 keeps columns P-1 .. P+T-1; the last one predicts past the end.
    return out.logits[:, :t, :]


def token_logprobs(logits: torch.Tensor, targets: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """log softmax(logits / temperature) at the target tokens. (B, T, V), (B, T) → (B, T).

    Matches the engine's sampling log-probs, which use the same temperature, and like them is
    computed in float32 whatever dtype the head gave the logits."""
    logits = logits.float()
    if temperature not in (0.0, 1.0):
        logits = logits / temperature
    return torch.log_softmax(logits, dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)


def token_entropy(logits: torch.Tensor, temperature: float = 1.0, *, with_grad: bool = False) -> torch.Tensor:
    """Entropy (nats) of each position's distribution softmax(logits / temperature), the one
    the log-probs and the loss use. (B, T, V) → (B, T). With gradient only when asked (an
    entropy bonus), since it keeps a (B, T, V) softmax in the graph."""
    with torch.set_grad_enabled(with_grad and torch.is_grad_enabled()):
        logits = logits.float()
        if temperature not in (0.0, 1.0):
            logits = logits / temperature
        logp = torch.log_softmax(logits, dim=-1)
        return -(logp.exp() * logp).sum(dim=-1)


def batch_logprobs(model: PreTrainedModel, batch: Batch, temperature: float = 1.0) -> torch.Tensor:
    """(B, T) log-probs of the batch's completion tokens, computed on the model's device and
    returned on the batch's."""
    home = batch.input_ids.device
    batch = batch.to(next(model.parameters()).device)
    logits = completion_logits(model, batch)
    targets = batch.input_ids[:, batch.prompt_len:]
    return token_logprobs(logits, targets, temperature).to(home)
