"""LoRA through peft: only adapters train, only adapters travel, and everything that reads the
policy (engine, reference model, checkpoints) sees the same numbers as the trainer."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch

from rlvr.algo import Objective, outcome_advantages
from rlvr.config.schema import ModelSection
from rlvr.engines import HFEngine, SamplingParams
from rlvr.engines.loading import load_model
from rlvr.engines.weight_keys import WeightKeyError, required_keys
from rlvr.errors import ConfigError
from rlvr.train import OptimConfig, Trainer
from rlvr.train.batching import collate
from rlvr.train.checkpoint import save_checkpoint
from rlvr.train.logprobs import batch_logprobs
from rlvr.train.lora import AdaptersOff, engine_copy, engine_weights, load_adapters, load_merged, wrap_lora

pytest.importorskip("peft", reason="peft is not installed (optional extra `lora`)")

TINY = Path(__file__).resolve().parents[2] / "models" / "tiny-arith"

RANK = 8
SETTINGS = ModelSection(lora_rank=RANK)
PROMPTS = ["12+34=", "5+77=", "90+9="]


def wrapped(model, rank=RANK):
    return wrap_lora(model, ModelSection(lora_rank=rank), TINY, seed=0)


def rollout_batch(engine, tokenizer, n=4):
    groups = engine.generate(PROMPTS, n, SamplingParams(max_new_tokens=5))
    flat = [r for g in groups for r in g]
    group_ids = torch.arange(len(PROMPTS)).repeat_interleave(n)
    rewards = torch.tensor([float(i % 3 == 0) for i in range(len(flat))])
    adv = outcome_advantages(rewards, group_ids, baseline="group_mean", scale="group_std")
    return collate(flat, adv, group_ids, tokenizer.pad_token_id)


def trained(policy, tokenizer, lr=1e-2, steps=2):
    """Big optimiser steps, so the adapters are far from their zero-B start. (The first step
    moves B only: with B = 0 the gradient of A, (alpha / r) B^T dL/dy x^T, is zero.)"""
    batch = rollout_batch(HFEngine(engine_copy(policy), tokenizer), tokenizer)
    trainer = Trainer(policy, Objective(), OptimConfig(lr=lr), micro_batch_size=12)
    for _ in range(steps):
        trainer.step(batch)
    return trainer


def test_only_adapters_change_and_base_weights_stay_bit_identical(tiny_model, tokenizer):
    policy = wrapped(tiny_model)
    before = {k: v.clone() for k, v in policy.state_dict().items()}
    trainer = trained(policy, tokenizer)
    adapters = set(engine_weights(policy))
    # The optimiser holds exactly the adapters: 2 matrices x 4 targets x layers.
    layers = policy.config.num_hidden_layers
    assert sum(len(g["params"]) for g in trainer.optimizer.param_groups) == len(adapters) == 2 * 4 * layers
    for key, value in policy.state_dict().items():
        if ".lora_" in key:
            assert not torch.equal(value, before[key]), key
        else:
            assert torch.equal(value, before[key]), key


def test_engine_weight_keys_are_the_inner_model_names(tiny_model):
    full = engine_weights(tiny_model)
    assert set(full) == set(tiny_model.state_dict())
    policy = wrapped(tiny_model)
    sent = engine_weights(policy)
    layers, cfg = policy.config.num_hidden_layers, policy.config
    expected = {f"model.layers.{i}.self_attn.{m}_proj.lora_{ab}.default.weight"
                for i in range(layers) for m in "qkvo" for ab in "AB"}
    assert set(sent) == expected
    q_out = cfg.num_attention_heads * (cfg.hidden_size // cfg.num_attention_heads)
    assert sent["model.layers.0.self_attn.q_proj.lora_A.default.weight"].shape == (RANK, cfg.hidden_size)
    assert sent["model.layers.0.self_attn.q_proj.lora_B.default.weight"].shape == (q_out, RANK)
    # ... which are exactly the keys the engine's copy requires.
    assert required_keys(engine_copy(policy).state_dict()) == expected


def test_adapter_sync_sends_far_fewer_bytes(tiny_model):
    full_bytes = sum(t.numel() * t.element_size() for t in engine_weights(tiny_model).values())
    lora_bytes = sum(t.numel() * t.element_size() for t in engine_weights(wrapped(tiny_model)).values())
    # Tiny model: hidden 128, 2 layers, 4 query / 2 key-value heads of 32. r (in + out) per
    # target: q, o 8 (128 + 128) = 2048; k, v 8 (128 + 64) = 1536; 2 x 7168 = 14,336 floats,
    # against 525,440 in the full state dict (the tied LM head counted again): 36.7x fewer bytes.
    assert lora_bytes == 14_336 * 4 and full_bytes == 525_440 * 4
    assert full_bytes / lora_bytes > 36


def test_engine_and_trainer_agree_after_an_adapter_sync(tiny_model, tokenizer):
    policy = wrapped(tiny_model)
    engine = HFEngine(engine_copy(policy), tokenizer, seed=3)
    trained(policy, tokenizer)
    stale = rollout_batch(engine, tokenizer)
    engine.load_weights(engine_weights(policy), version=1)
    batch = rollout_batch(engine, tokenizer)
    policy.eval()
    with torch.no_grad():
        mask = batch.completion_mask
        new = batch_logprobs(policy, batch) * mask
        before_sync = batch_logprobs(policy, stale) * stale.completion_mask
    assert (new - batch.old_logp * mask).abs().max() < 1e-4
    # The sync mattered: rollouts made before it disagree with the trained policy.
    assert (before_sync - stale.old_logp * stale.completion_mask).abs().max() > 1e-2


def test_reference_is_the_base_model(tiny_model, tokenizer):
    base = tiny_model
    batch = rollout_batch(HFEngine(base, tokenizer), tokenizer)
    with torch.no_grad():
        base_logp = batch_logprobs(base, batch)
    policy = wrapped(copy.deepcopy(base))
    trained(policy, tokenizer)
    ref = AdaptersOff(policy)
    with torch.no_grad():
        # Same weights and ops; not always bit-equal, because the CPU BLAS may round the LM
        # head's product over the sliced hidden states differently (seen: 3e-6 in a logit).
        torch.testing.assert_close(batch_logprobs(ref, batch), base_logp, atol=1e-5, rtol=0)
        assert (batch_logprobs(policy, batch) - base_logp).abs().max() > 1e-2  # adapters are back on
    assert policy.training  # the reference pass leaves the policy's mode alone


def test_load_weights_key_mismatch_is_a_clear_error(tiny_model, tokenizer):
    full_engine = HFEngine(copy.deepcopy(tiny_model), tokenizer)
    weights = dict(tiny_model.state_dict())
    weights.pop("model.norm.weight")
    with pytest.raises(WeightKeyError, match=r"1 key\(s\) of the full model missing, e.g. \['model.norm.weight'\]"):
        full_engine.load_weights(weights, version=1)
    with pytest.raises(WeightKeyError, match=r"1 key\(s\) the engine's model does not have, e.g. \['typo'\]"):
        full_engine.load_weights({**tiny_model.state_dict(), "typo": torch.zeros(1)}, version=1)
    policy = wrapped(copy.deepcopy(tiny_model))
    lora_engine = HFEngine(engine_copy(policy), tokenizer)
    # A full fine-tuning trainer's weights do not fit a LoRA engine (q_proj.weight is now
    # q_proj.base_layer.weight), and an adapter left out is missing.
    with pytest.raises(WeightKeyError, match="does not have"):
        lora_engine.load_weights(tiny_model.state_dict(), version=1)
    adapters = engine_weights(policy)
    adapters.pop("model.layers.1.self_attn.v_proj.lora_B.default.weight")
    with pytest.raises(WeightKeyError, match=r"1 adapter key\(s\) missing.*layers.1.self_attn.v_proj.lora_B"):
        lora_engine.load_weights(adapters, version=1)
    assert lora_engine.policy_version == 0 and full_engine.policy_version == 0


def test_unknown_lora_target_is_a_config_error(tiny_model):
    with pytest.raises(ConfigError, match=r"model.lora_targets = \['qq_proj'\]"):
        wrap_lora(tiny_model, ModelSection(lora_rank=4, lora_targets=["qq_proj"]), TINY, seed=0)


def test_checkpoint_resumes_and_evaluates_merged(tiny_model, tokenizer, tmp_path):
    policy = wrapped(copy.deepcopy(tiny_model))
    trained(policy, tokenizer)
    folder = save_checkpoint(tmp_path, 1, policy, {}, keep=1)
    assert (folder / "adapter_model.safetensors").is_file() and not (folder / "model.safetensors").exists()
    # Resume: a fresh wrap with another seed takes the saved adapters exactly.
    fresh = wrap_lora(copy.deepcopy(tiny_model), SETTINGS, TINY, seed=7)
    load_adapters(fresh, folder)
    for key, value in engine_weights(policy).items():
        assert torch.equal(engine_weights(fresh)[key], value), key
    # Evaluation: merged into the base named in adapter_config.json, same numbers up to rounding.
    merged = load_merged(folder, load_model)
    assert not any(".lora_" in k for k in merged.state_dict())
    batch = rollout_batch(HFEngine(engine_copy(policy), tokenizer), tokenizer)
    policy.eval()
    with torch.no_grad():
        torch.testing.assert_close(batch_logprobs(merged, batch), batch_logprobs(policy, batch), atol=1e-5, rtol=0)
    with pytest.raises(ConfigError, match="its adapters have r = 8, but model.lora_rank = 4"):
        load_adapters(wrapped(copy.deepcopy(tiny_model), rank=4), folder)
