"""The critic for PPO and VAPO: a value model and its optimiser step.

The value model is the policy's transformer body (a fresh copy of the initial weights, as PPO
and VAPO initialise it) with a scalar head in place of the LM head. V_t is read at the same
columns as the policy's logits: the hidden state after prompt + y_<t estimates the return of
the rest of the completion from there. The value loss is aggregated as a token mean over the
whole batch, computed with full-batch weights so that micro-batching stays exact.
"""

from __future__ import annotations

import copy
from collections import defaultdict

import torch
from torch import nn
from transformers import PreTrainedModel

from rlvr.algo.value import VALUE_LOSSES, explained_variance
from rlvr.types import Batch


class ValueModel(nn.Module):
    def __init__(self, policy: PreTrainedModel):
        super().__init__()
        self.body = copy.deepcopy(policy.get_decoder())
        self.head = nn.Linear(policy.config.hidden_size, 1, device=policy.device)
        nn.init.zeros_(self.head.weight)
        nn.init.zeros_(self.head.bias)

    def forward(self, batch: Batch) -> torch.Tensor:
        """V (B, T) at the columns that precede each completion token, on the batch's device
        (computed on the model's)."""
        home = batch.input_ids.device
        batch = batch.to(self.head.weight.device)
        positions = (batch.attention_mask.cumsum(-1) - 1).clamp(min=0)
        hidden = self.body(input_ids=batch.input_ids, attention_mask=batch.attention_mask,
                           position_ids=positions, use_cache=False).last_hidden_state
        t = batch.completion_mask.shape[1]
        start = batch.input_ids.shape[1] - t - 1
        return self.head(hidden[:, start:start + t].float()).squeeze(-1).to(home)


class CriticTrainer:
    def __init__(self, model: ValueModel, *, lr: float, loss: str, clip_eps: float, micro_batch_size: int,
                 max_grad_norm: float = 1.0):
        self.model, self.loss_name, self.clip_eps = model, loss, clip_eps
        self.micro_batch_size, self.max_grad_norm = micro_batch_size, max_grad_norm
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr)

    @torch.no_grad()
    def values(self, batch: Batch) -> torch.Tensor:
        self.model.eval()
        return torch.cat([self.model(batch.rows(i)) for i in torch.arange(len(batch.input_ids)).split(self.micro_batch_size)])

    def step(self, batch: Batch, old_values: torch.Tensor, returns: torch.Tensor) -> dict[str, float]:
        """One optimiser step of the value loss towards `returns` (B, T)."""
        self.model.train()
        self.optimizer.zero_grad(set_to_none=True)
        mask = batch.completion_mask
        weights = mask / mask.sum().clamp(min=1)
        sums: dict[str, float] = defaultdict(float)
        args = {"clip_eps": self.clip_eps} if self.loss_name == "clipped" else {}
        for index in torch.arange(len(batch.input_ids)).split(self.micro_batch_size):
            v = self.model(batch.rows(index))
            per_token, _ = VALUE_LOSSES[self.loss_name](v, old_values[index], returns[index], **args)
            loss = (weights[index] * per_token).sum()
            loss.backward()
            sums["critic/value_loss"] += float(loss.detach())
        norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_grad_norm)
        self.optimizer.step()
        sums["critic/grad_norm"] = float(norm)
        sums["critic/explained_variance"] = float(explained_variance(old_values, returns, mask))
        return dict(sums)
