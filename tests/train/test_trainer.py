"""Micro-batching gives the full-batch gradient; a step moves the weights; checkpoints are whole."""

from __future__ import annotations

import copy
import dataclasses

import pytest
import torch

from rlvr.algo import AGGREGATIONS, Objective, outcome_advantages
from rlvr.engines import HFEngine, SamplingParams
from rlvr.train import OptimConfig, Trainer
from rlvr.train.batching import collate
from rlvr.train.checkpoint import list_checkpoints, load_state, save_checkpoint


def rollout_batch(model, tokenizer, seed=0):
    engine = HFEngine(copy.deepcopy(model), tokenizer, seed=seed)
    groups = engine.generate(["12+34=", "5+77=", "90+9="], 4, SamplingParams(max_new_tokens=5))
    flat = [r for g in groups for r in g]
    group_ids = torch.arange(3).repeat_interleave(4)
    rewards = torch.tensor([float(i % 3 == 0) for i in range(12)])
    adv = outcome_advantages(rewards, group_ids, baseline="group_mean", scale="group_std")
    batch = collate(flat, adv, group_ids, tokenizer.pad_token_id)
    # Move off-policy a little so that clipping is active on some tokens.
    shift = 0.3 * torch.randn_like(batch.old_logp).sign() * batch.completion_mask
    return dataclasses.replace(batch, old_logp=batch.old_logp + shift)


def grads(trainer: Trainer):
    return torch.cat([p.grad.flatten() for p in trainer.model.parameters() if p.grad is not None])


@pytest.mark.parametrize("aggregation", sorted(AGGREGATIONS))
def test_micro_batches_reproduce_the_full_batch_gradient(tiny_model, tokenizer, aggregation):
    batch = rollout_batch(tiny_model, tokenizer)
    objective = Objective(aggregation=aggregation, aggregation_constant=5.0)
    full = Trainer(tiny_model, objective, OptimConfig(), micro_batch_size=12)
    m_full = full.accumulate_gradients(batch)
    g_full = grads(full)
    one = Trainer(tiny_model, objective, OptimConfig(), micro_batch_size=1)
    m_one = one.accumulate_gradients(batch)
    torch.testing.assert_close(grads(one), g_full, atol=1e-6, rtol=1e-4)
    assert m_one["loss/policy"] == pytest.approx(m_full["loss/policy"], abs=1e-6)
    assert m_full["policy/clip_low_frac"] + m_full["policy/clip_high_frac"] > 0


def test_step_changes_weights_and_reports_metrics(tiny_model, tokenizer):
    batch = rollout_batch(tiny_model, tokenizer)
    before = copy.deepcopy(tiny_model.state_dict())
    metrics = Trainer(tiny_model, Objective(), OptimConfig(lr=1e-3), micro_batch_size=4).step(batch)
    moved = [k for k, v in tiny_model.state_dict().items() if not torch.equal(v, before[k])]
    assert moved
    for key in ("loss/policy", "policy/entropy", "train/grad_norm", "time/optimizer_s", "policy/approx_kl"):
        assert key in metrics and metrics[key] == metrics[key]  # present and not NaN


def test_checkpoint_is_atomic_and_pruned(tiny_model, tmp_path):
    root = tmp_path / "checkpoints"
    (root / ".step_9.tmp123").mkdir(parents=True)  # debris of a killed save
    for step in (1, 2, 3):
        save_checkpoint(root, step, tiny_model, {"value": step}, keep=2)
    assert [p.name for p in list_checkpoints(root)] == ["step_2", "step_3"]
    torch.manual_seed(5)
    save_checkpoint(root, 4, tiny_model, {"value": 4}, keep=2)
    expected = torch.rand(3)
    torch.manual_seed(99)
    state = load_state(list_checkpoints(root)[-1])
    assert state["step"] == 4 and state["value"] == 4
    torch.testing.assert_close(torch.rand(3), expected)  # the RNG state came back
