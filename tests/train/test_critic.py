"""The critic: values at the right columns, a loss that falls, exact micro-batching."""

from __future__ import annotations

import copy

import torch

from rlvr.engines import HFEngine, SamplingParams
from rlvr.train.batching import collate
from rlvr.train.critic import CriticTrainer, ValueModel


def batch_of(model, tokenizer):
    engine = HFEngine(copy.deepcopy(model), tokenizer, seed=0)
    flat = [r for g in engine.generate(["12+34=", "5+77="], 4, SamplingParams(max_new_tokens=5)) for r in g]
    return collate(flat, torch.zeros(len(flat)), torch.arange(2).repeat_interleave(4), tokenizer.pad_token_id)


def test_new_critic_predicts_zero_and_learns_the_returns(tiny_model, tokenizer):
    batch = batch_of(tiny_model, tokenizer)
    critic = CriticTrainer(ValueModel(tiny_model), lr=1e-2, loss="mse", clip_eps=0.2, micro_batch_size=8)
    values = critic.values(batch)
    assert values.shape == batch.completion_mask.shape and values.abs().max() == 0  # zero-initialised head
    returns = torch.linspace(0, 1, values.shape[0])[:, None] * batch.completion_mask
    first = critic.step(batch, values, returns)["critic/value_loss"]
    for _ in range(30):
        last = critic.step(batch, critic.values(batch), returns)["critic/value_loss"]
    assert last < 0.2 * first


def test_critic_micro_batches_match_the_full_batch(tiny_model, tokenizer):
    batch = batch_of(tiny_model, tokenizer)
    returns = torch.rand(batch.completion_mask.shape) * batch.completion_mask
    grads = []
    for size in (8, 3):
        torch.manual_seed(0)
        critic = CriticTrainer(ValueModel(tiny_model), lr=0.0, loss="clipped", clip_eps=0.2, micro_batch_size=size)
        critic.model.head.weight.data.normal_()
        critic.step(batch, critic.values(batch), returns)
        grads.append(torch.cat([p.grad.flatten() for p in critic.model.parameters() if p.grad is not None]))
    torch.testing.assert_close(grads[0], grads[1], atol=1e-6, rtol=1e-4)
