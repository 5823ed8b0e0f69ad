"""A sync run's in-process engine samples with the trainer's own model (no second copy, no
copy per step); an async run's, an FSDP run's and a gradient-checkpointed run's keep a copy."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from rlvr.config import load_config
from rlvr.engines import HFEngine, SamplingParams
from rlvr.orchestrate.components import build
from rlvr.orchestrate.engine_choice import needs_copy
from rlvr.orchestrate.plan import plan_run

REPO = Path(__file__).resolve().parents[2]


def parts_for(tmp_path, *overrides):
    config = load_config(REPO / "recipes" / "grpo.toml", [f"run.output_dir={tmp_path}", *overrides])
    return build(plan_run(config), REPO)


def test_sync_engine_samples_with_the_trainers_model(tmp_path):
    parts = parts_for(tmp_path)
    assert parts.engine.model is parts.trainer.model
    async_parts = parts_for(tmp_path, "orchestrate.mode=async")
    assert async_parts.engine.model is not async_parts.trainer.model


@pytest.mark.parametrize("override", ["orchestrate.mode=async", "train.gradient_checkpointing=true",
                                      "train.fsdp=true"])
def test_what_keeps_a_copy(tmp_path, override):
    config = load_config(REPO / "recipes" / "grpo.toml", [f"run.output_dir={tmp_path}", override])
    assert needs_copy(config)
    assert not needs_copy(load_config(REPO / "recipes" / "grpo.toml", [f"run.output_dir={tmp_path}"]))


def test_a_shared_model_returns_in_the_trainers_mode_and_sees_each_step(tmp_path):
    parts = parts_for(tmp_path, "sampling.max_new_tokens=6")
    model, engine = parts.trainer.model, parts.engine
    prompts = [parts.train_set[0].prompt, parts.train_set[1].prompt]
    model.train()
    engine.generate(prompts, 2, parts.sampling)
    assert model.training  # the trainer's mode, not the engine's eval
    # An optimiser step changes the weights in place; the published dict is the model's own
    # tensors (nothing copied), and the next generation samples the new weights: the same
    # rollouts as a fresh engine holding a copy of them, with the same generator state.
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.05 * torch.randn_like(p))
    weights = parts.trainer.engine_weights()
    engine.load_weights(weights, version=1)
    assert all(weights[k].data_ptr() == v.data_ptr() for k, v in model.state_dict().items())
    fresh = HFEngine(type(model)(model.config).eval(), parts.tokenizer)
    fresh.model.load_state_dict(model.state_dict())
    state = engine.generator.get_state()
    fresh.generator.set_state(state.clone())
    ours, theirs = engine.generate(prompts, 2, parts.sampling), fresh.generate(prompts, 2, parts.sampling)
    assert [[r.completion_ids for r in g] for g in ours] == [[r.completion_ids for r in g] for g in theirs]
    assert engine.policy_version == 1


def test_a_wide_models_decode_reads_the_parameters_themselves(monkeypatch):
    """Above JOIN_MAX_HIDDEN no weight copy sits beside the model (joined q|k|v and gate|up copies
    cost two thirds of every layer, 261 MiB at 104M parameters): the engine's own decoder gets
    no joined weights, and every tensor it uses per layer is a parameter's own storage."""
    from rlvr.engines import qwen2_decode
    from rlvr.models import build_char_tokenizer, tiny_qwen2

    decoders, init = [], qwen2_decode.Qwen2Decoder.__init__
    monkeypatch.setattr(qwen2_decode.Qwen2Decoder, "__init__",
                        lambda self, *a, **k: decoders.append(self) or init(self, *a, **k))
    model = tiny_qwen2(hidden_size=qwen2_decode.JOIN_MAX_HIDDEN + 64, intermediate_size=640, num_layers=2,
                       num_heads=4, num_kv_heads=2)
    engine = HFEngine(model, build_char_tokenizer(128))
    engine.generate(["12+7="], 2, SamplingParams(max_new_tokens=3))
    [decoder] = decoders
    assert engine._joined is None and decoder.joined is None
    own = {p.data_ptr() for p in model.parameters()}
    used = [t for w in decoder.layers for t in vars(w).values() if isinstance(t, torch.Tensor)]
    assert len(used) == len(list(model.model.layers.parameters()))
    assert {t.data_ptr() for t in used} <= own


def test_stale_joined_weights_go_before_the_new_ones_are_made(tmp_path, monkeypatch):
    from rlvr.engines import qwen2_decode

    parts = parts_for(tmp_path, "orchestrate.mode=async")
    joined = qwen2_decode.JoinedWeights(parts.engine.model)
    first = joined.layers()
    assert first[0].qkv_w is not None and first[0].gate_up_w is not None
    seen, real = [], qwen2_decode.JoinedWeights._join
    monkeypatch.setattr(qwen2_decode.JoinedWeights, "_join", staticmethod(lambda layer: seen.append(len(joined._layers)) or real(layer)))
    with torch.no_grad():
        next(parts.engine.model.model.layers.parameters()).add_(1.0)  # a new weight version
    joined.layers()
    assert seen and set(seen) == {0}
    assert joined.layers() is joined.layers()  # unchanged weights: the same copies, not rebuilt
