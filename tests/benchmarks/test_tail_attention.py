"""benchmarks/tail_attention.py: its batches are the shapes it names (rows that share a mask,
and ragged ones that do not), and its "transformers' SDPA" side really runs without GQA_SDPA
while the other side runs with it."""

from __future__ import annotations

import sys
from pathlib import Path

import torch

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

import tail_attention  # noqa: E402

import rlvr.train.shared_prompt as shared  # noqa: E402


def test_the_batches_have_the_shapes_named(tokenizer):
    w1, ragged = tail_attention.batch_for("w1", tokenizer), tail_attention.batch_for("w1-ragged", tokenizer)
    assert w1.input_ids.shape == (64, 22 + 64) and bool((w1.attention_mask == 1).all())
    assert ragged.prompt_len == 22 and not bool((ragged.attention_mask == ragged.attention_mask[:1]).all())
    g7 = tail_attention.batch_for("g7", tokenizer)
    assert g7.input_ids.shape == (32, 22 + 512)


def test_each_side_runs_the_attention_it_names(tiny_model, tokenizer, monkeypatch):
    calls = []
    real = shared._additive
    monkeypatch.setattr(shared, "_additive", lambda m, d: calls.append(1) or real(m, d))
    batch = tail_attention.batch_for("w1-ragged", tokenizer)
    _, new, new_grads = tail_attention.one_pass(tiny_model, batch, gqa=True)
    assert len(calls) == tiny_model.config.num_hidden_layers
    calls.clear()
    _, old, old_grads = tail_attention.one_pass(tiny_model, batch, gqa=False)
    assert calls == [] and shared.masked_gqa.__name__ == "masked_gqa"  # restored after the side
    torch.testing.assert_close(new, old, rtol=1e-5, atol=1e-6)
    assert all(g is not None for g in new_grads)
