"""The engine contract (rlvr.engines.Engine): every engine passes these tests.

An engine joins by adding a factory to ENGINES below; one that needs hardware this machine
lacks is skipped with the reason.
"""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path

import pytest
import torch

from rlvr.engines import HFEngine, SamplingParams
from rlvr.train.batching import collate
from rlvr.train.logprobs import batch_logprobs

TINY = Path(__file__).resolve().parents[2] / "models" / "tiny-arith"


def _vllm_reason() -> str | None:
    if importlib.util.find_spec("vllm") is None:
        return "vllm is not installed (optional extra `vllm`)"
    if not torch.cuda.is_available():
        return "the vLLM engine needs a CUDA GPU"
    return None


_VLLM: dict = {}  # one vllm.LLM for the whole session: starting one takes tens of seconds


def _vllm_engine(model, tok):
    """A fresh VLLMEngine (version 0, its own generator) around the session's LLM, which holds
    the shipped tiny model in float32 (test_new_weights_and_version reloads the same weights)."""
    from rlvr.engines.vllm_engine import VLLMEngine, VLLMSettings, build_vllm_engine

    if "engine" not in _VLLM:
        settings = VLLMSettings(dtype="float32", gpu_memory_utilization=0.3, enforce_eager=True)
        _VLLM["engine"] = build_vllm_engine(str(TINY), tok, seed=0, settings=settings,
                                            context=model.config.max_position_embeddings)
    first = _VLLM["engine"]
    return VLLMEngine(first.llm, tok, first.sampling_params_cls, seed=0, context=first.context,
                      weight_keys=model.state_dict().keys())


ENGINES = {
    "hf": pytest.param(lambda model, tok: HFEngine(model, tok, seed=0), id="hf"),
    "hf-cuda": pytest.param(lambda model, tok: HFEngine(model.cuda(), tok, seed=0), id="hf-cuda",
                            marks=[pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(),
                                                                       reason="needs a CUDA GPU")]),
    "vllm": pytest.param(_vllm_engine, id="vllm", marks=pytest.mark.skipif(
        _vllm_reason() is not None, reason=_vllm_reason() or "")),
}


@pytest.fixture(params=list(ENGINES.values()))
def engine(request, tiny_model, tokenizer):
    return request.param(copy.deepcopy(tiny_model), tokenizer)


def test_shape_of_the_result(engine, tokenizer):
    params = SamplingParams(max_new_tokens=5)
    groups = engine.generate(["1+2=", "30+40=", "5+5="], 3, params)
    assert [len(g) for g in groups] == [3, 3, 3]
    for g, prompt in zip(groups, ["1+2=", "30+40=", "5+5="]):
        for r in g:
            assert list(r.prompt_ids) == tokenizer(prompt, add_special_tokens=False)["input_ids"]
            assert 1 <= len(r.completion_ids) <= 5 and len(r.logprobs) == len(r.completion_ids)
            assert r.finish_reason in ("stop", "length")
            assert all(lp <= 0 for lp in r.logprobs)


@pytest.mark.parametrize("temperature", [1.0, 0.7])
def test_logprobs_are_the_trainers(engine, tiny_model, tokenizer, temperature):
    params = SamplingParams(max_new_tokens=6, temperature=temperature)
    rollouts = [r for g in engine.generate(["12+34=", "7+8=", "99+99="], 4, params) for r in g]
    n = len(rollouts)
    batch = collate(rollouts, torch.zeros(n), torch.zeros(n, dtype=torch.long), tokenizer.pad_token_id)
    assert batch.completion_mask.sum() > n  # more than one token per row on average
    with torch.no_grad():
        forced = batch_logprobs(tiny_model, batch, temperature)
    mask = batch.completion_mask.bool()
    torch.testing.assert_close(forced[mask], batch.old_logp[mask], atol=1e-4, rtol=0)


def test_new_weights_and_version(engine, tiny_model):
    assert engine.policy_version == 0
    state = {k: v.clone() for k, v in tiny_model.state_dict().items()}
    engine.load_weights(state, version=3)
    assert engine.policy_version == 3
    assert all(r.policy_version == 3 for r in engine.generate(["1+1="], 2, SamplingParams(max_new_tokens=2))[0])
