"""Gradient checkpointing recomputes activations and leaves the gradients as they were."""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path

import pytest
import torch

from rlvr.algo import Objective
from rlvr.train import OptimConfig, Trainer
from rlvr.train.activation_memory import enable_gradient_checkpointing

spec = importlib.util.spec_from_file_location("trainer_tests", Path(__file__).with_name("test_trainer.py"))
trainer_tests = importlib.util.module_from_spec(spec)
spec.loader.exec_module(trainer_tests)


def saved_for_backward(trainer, batch) -> tuple[torch.Tensor, int]:
    """The gradient, and the elements autograd kept for the backward during the forward (the
    activation memory; the checkpointed layers keep theirs behind their own hooks instead)."""
    kept = [0]

    def pack(t):
        kept[0] += t.numel()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        trainer.accumulate_gradients(batch)
    return trainer_tests.grads(trainer), kept[0]


def test_checkpointed_gradients_equal_the_plain_ones_with_fewer_saved_activations(tiny_model, tokenizer):
    batch = trainer_tests.rollout_batch(tiny_model, tokenizer)
    checkpointed = copy.deepcopy(tiny_model)
    enable_gradient_checkpointing(checkpointed)
    # share_prompts off on both: checkpointing turns the KV cache (and so prompt sharing) off,
    # and this compares checkpointing alone
    runs = [saved_for_backward(Trainer(m, Objective(), OptimConfig(), micro_batch_size=len(batch.input_ids),
                                       share_prompts=False), batch)
            for m in (tiny_model, checkpointed)]
    (plain_grad, plain_kept), (ckpt_grad, ckpt_kept) = runs
    torch.testing.assert_close(ckpt_grad, plain_grad, rtol=1e-5, atol=1e-7)
    assert ckpt_kept < 0.5 * plain_kept, (ckpt_kept, plain_kept)


def test_a_run_with_gradient_checkpointing_matches_the_plain_run(tmp_path):
    from rlvr.config import load_config
    from rlvr.orchestrate import train

    recipe = Path(__file__).resolve().parents[2] / "recipes" / "grpo.toml"
    small = [f"run.output_dir={tmp_path}", "train.steps=2", "train.lr=1e-3", "sampling.prompts_per_step=4",
             "sampling.group_size=4", "eval.size=0", "log.progress=none"]
    rows = [train(load_config(recipe, [*small, f"run.name={name}", f"train.gradient_checkpointing={on}"]))
            .folder.read_metrics() for name, on in (("plain", "false"), ("ckpt", "true"))]
    for key in ("loss/policy", "train/grad_norm", "reward/mean", "policy/kl_ref"):
        assert [r[key] for r in rows[1]] == [pytest.approx(r[key], rel=1e-5, abs=1e-7) for r in rows[0]], key
