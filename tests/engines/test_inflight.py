"""In-flight weight updates (PipelineRL) in the in-process engine: new weights taken between
decode steps, each token tagged with the version whose forward produced it, and its log-prob
that forward's (the KV cache of the older weights kept)."""

from __future__ import annotations

import copy

import pytest
import torch
from transformers import DynamicCache

from rlvr.engines import HFEngine, SamplingParams

PARAMS = SamplingParams(max_new_tokens=6, min_new_tokens=6, temperature=1.0)
PROMPT = "23+45="


def perturbed(model, scale=0.05, seed=1):
    gen = torch.Generator().manual_seed(seed)
    return {k: v + scale * torch.randn(v.shape, generator=gen) if v.is_floating_point() else v
            for k, v in model.state_dict().items()}


def poll_on_call(k: int, weights: dict, version: int):
    """A weight_poll that hands over `weights` on its k-th call (1-based), else None."""
    calls = {"n": 0}

    def poll():
        calls["n"] += 1
        return (weights, version) if calls["n"] == k else None
    return poll


def test_no_new_weights_changes_nothing(tiny_model, tokenizer):
    plain = HFEngine(copy.deepcopy(tiny_model), tokenizer, seed=3).generate([PROMPT], 4, PARAMS)[0]
    polled = HFEngine(copy.deepcopy(tiny_model), tokenizer, seed=3)
    polled.accept_inflight_weights(lambda: None)
    out = polled.generate([PROMPT], 4, PARAMS)[0]
    assert out == plain and all(r.token_versions == () for r in out)


@pytest.mark.parametrize("k", [1, 3])
def test_tokens_after_the_update_carry_the_new_version(tiny_model, tokenizer, k):
    engine = HFEngine(copy.deepcopy(tiny_model), tokenizer, seed=3)
    engine.accept_inflight_weights(poll_on_call(k, perturbed(tiny_model), 7))
    out = engine.generate([PROMPT], 4, PARAMS)[0]
    for r in out:
        assert r.policy_version == 0
        assert r.token_versions == (0,) * k + (7,) * (PARAMS.max_new_tokens - k)
    assert engine.policy_version == 7


def test_logprob_is_that_of_the_forward_that_produced_the_token(tiny_model, tokenizer):
    """Token k's log-prob: the new weights' forward of token k-1 over a cache built by the old
    weights, computed here by hand; and not the old weights' log-prob."""
    k, new = 3, perturbed(tiny_model)
    engine = HFEngine(copy.deepcopy(tiny_model), tokenizer, seed=5)
    engine.accept_inflight_weights(poll_on_call(k, new, 1))
    r = engine.generate([PROMPT], 1, PARAMS)[0][0]
    old_model, new_model = copy.deepcopy(tiny_model).eval(), copy.deepcopy(tiny_model).eval()
    new_model.load_state_dict(new)
    ids = torch.tensor([list(r.prompt_ids) + list(r.completion_ids)])
    p = len(r.prompt_ids)
    with torch.no_grad():
        cache = DynamicCache(config=tiny_model.config)
        kw = {engine._cache_kw: cache}
        old_model(input_ids=ids[:, :p + k - 1], use_cache=True, **kw)
        step = new_model(input_ids=ids[:, p + k - 1:p + k], position_ids=torch.tensor([[p + k - 1]]),
                         use_cache=True, **kw)
        expected = torch.log_softmax(step.logits[0, -1].float(), -1)[r.completion_ids[k]].item()
        old_only = torch.log_softmax(old_model(input_ids=ids[:, :p + k]).logits[0, -1].float(), -1)
    assert r.logprobs[k] == pytest.approx(expected, abs=1e-4)
    assert abs(old_only[r.completion_ids[k]].item() - expected) > 1e-3
