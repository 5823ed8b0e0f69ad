"""The shared-prompt forward (rlvr.train.shared_prompt) against the plain one on the tiny model:
the same log-probs up to float32 rounding, and the same bits every time it runs, whatever ran
in between (no cache or mask kept from an earlier call)."""

from __future__ import annotations

import torch

from rlvr.train.batching import collate
from rlvr.train.logprobs import completion_logprobs
from rlvr.train.shared_prompt import prompt_groups
from rlvr.types import Rollout


def grouped_batch(prompts, completions):
    """Each prompt with each completion: rows sharing a prompt, as in a GRPO group."""
    rows = [Rollout(p, c, (0.0,) * len(c), "", "stop") for p in prompts for c in completions]
    return collate(rows, torch.zeros(len(rows)), torch.zeros(len(rows), dtype=torch.long), 0)


A = grouped_batch([(5, 6, 7, 8), (9, 10, 11)], [(20, 21, 0), (22, 23, 24, 25, 0), (26,)])
B = grouped_batch([(30, 31), (32, 33, 34, 35, 36)], [(40, 41, 42, 0), (43, 0)])


def logp(model, batch, share=True):
    with torch.no_grad():
        return completion_logprobs(model, batch, entropy=False, share_prompts=share)[0] * batch.completion_mask


def test_both_batches_share_prompts():
    assert prompt_groups(A) is not None and prompt_groups(B) is not None
    assert prompt_groups(grouped_batch([(5, 6), (7, 8)], [(1, 0)])) is None  # no two rows share one


def test_shared_forward_equals_the_plain_one_within_rounding(tiny_pair, monkeypatch):
    import rlvr.train.logprobs as logprobs

    calls = []
    real = logprobs.shared_prompt_forward
    monkeypatch.setattr(logprobs, "shared_prompt_forward", lambda *a, **k: calls.append(1) or real(*a, **k))
    model = tiny_pair[0]
    for batch in (A, B):
        torch.testing.assert_close(logp(model, batch), logp(model, batch, share=False), rtol=1e-5, atol=1e-5)
    assert len(calls) == 2  # the shared path ran (a signature change would silently fall back to plain)


def test_shared_forward_is_bit_identical_across_calls_with_other_batches_between(tiny_pair):
    model = tiny_pair[0]
    first = logp(model, A)
    logp(model, B)
    logp(model, B, share=False)
    assert torch.equal(logp(model, A), first)


# --- The tail pass under GQA_SDPA (grouped K/V heads under a mask, no repeat) -----------------
# The tiny model has 4 query heads over 2 K/V heads, so transformers' SDPA path repeats K and V
# in the tail pass (it has a mask); GQA_SDPA must give the same values and gradients without it.

def grads(model, batch, monkeypatch, gqa=True):
    """Shared-prompt log-probs and gradients, with the tail pass under GQA_SDPA or (gqa False)
    under transformers' own SDPA."""
    import contextlib

    import rlvr.train.shared_prompt as shared

    model.zero_grad()
    with monkeypatch.context() as patch:
        if not gqa:
            patch.setattr(shared, "masked_gqa", lambda module: contextlib.nullcontext())
        logp_ = completion_logprobs(model, batch, entropy=False)[0] * batch.completion_mask
        logp_.sum().backward()
    return logp_.detach(), {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


def test_the_tail_pass_under_gqa_sdpa_equals_transformers_sdpa(tiny_model, monkeypatch):
    assert tiny_model.config.num_attention_heads != tiny_model.config.num_key_value_heads
    for batch in (A, B):  # left-padded prompts of two lengths: the mask rows differ
        new, new_grads = grads(tiny_model, batch, monkeypatch)
        old, old_grads = grads(tiny_model, batch, monkeypatch, gqa=False)
        torch.testing.assert_close(new, old, rtol=1e-6, atol=1e-6)
        assert new_grads.keys() == old_grads.keys() and len(new_grads) > 0
        for name in new_grads:
            torch.testing.assert_close(new_grads[name], old_grads[name], rtol=1e-5, atol=1e-6, msg=name)


def test_no_key_value_repeat_in_the_tail_pass_and_one_mask_row_when_rows_agree(tiny_model, monkeypatch):
    import transformers.integrations.sdpa_attention as hf_sdpa

    import rlvr.train.shared_prompt as shared

    repeats, additive = [], []
    real_repeat, real_additive = hf_sdpa.repeat_kv, shared._additive
    monkeypatch.setattr(hf_sdpa, "repeat_kv", lambda h, n: repeats.append(h.shape[0]) or real_repeat(h, n))
    monkeypatch.setattr(shared, "_additive", lambda m, d: additive.append(out := real_additive(m, d)) or out)
    same_length = grouped_batch([(5, 6, 7), (9, 10, 11)], [(20, 21, 0), (22, 23, 0)])  # no padding
    for batch, rows in ((A, A.input_ids.shape[0]), (same_length, 1)):
        repeats.clear(), additive.clear()
        logp(tiny_model, batch)
        assert batch.input_ids.shape[0] not in repeats  # the prompt pass (U rows) may repeat; the tail, never
        layers = tiny_model.config.num_hidden_layers
        assert len(additive) == layers and all(a is additive[0] for a in additive)  # one mask per pass
        assert additive[0].shape[0] == rows and additive[0].dtype == torch.float32
    assert tiny_model.config._attn_implementation == "sdpa" and shared._additive_memo == []


def test_the_attention_setting_is_restored_when_the_tail_pass_raises(tiny_model):
    from rlvr.train.shared_prompt import GQA_SDPA, masked_gqa

    seen = []
    try:
        with masked_gqa(tiny_model):
            seen.append(tiny_model.config._attn_implementation)
            raise RuntimeError("out of memory, say")
    except RuntimeError:
        pass
    assert seen == [GQA_SDPA] and tiny_model.config._attn_implementation == "sdpa"
