"""rlvr.engines.qwen2_decode against the model's own forward (HFEngine's generic path).

Differential tests: the same prompts through both decoders, fed the same tokens, must give the
same logits (1e-5; on this CPU they come out bit-identical, but the test does not demand it),
and HFEngine with and without the fast path must give the same rollouts for the same seed.
"""

from __future__ import annotations

import copy

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

from rlvr.engines import HFEngine, SamplingParams
from rlvr.engines import qwen2_decode as qd
from rlvr.engines.hf import _ModelDecoder, left_pad
from rlvr.errors import RlvrError
from rlvr.models import tiny_qwen2
from rlvr.models.precision import use_fp32_head

# Ragged, left-padded: lengths 1 to 9, token ids 3..97 (no EOS/PAD inside a prompt).
ROWS = [[5, 17, 40], [60], [8, 9, 10, 11, 12, 13, 14, 15, 16], [70, 71, 72, 73, 74], [33, 34]]
PROMPTS = ["12+7=", "3+4=", "What is 40+2? Answer:", "9+9="]


@pytest.fixture
def gqa_model():
    """WORKLOAD-shaped (256 hidden, 4 heads / 2 KV heads, head_dim 64), 2 layers to stay fast."""
    return tiny_qwen2(hidden_size=256, intermediate_size=1024, num_layers=2, num_heads=4,
                      num_kv_heads=2, seed=7).eval()


@pytest.fixture
def wide_model():
    """Wider than JOIN_MAX_HIDDEN: the split GEMMs on the parameters themselves."""
    return tiny_qwen2(hidden_size=320, intermediate_size=640, num_layers=2, num_heads=4,
                      num_kv_heads=2, seed=7).eval()


def _qwen2(**overrides) -> Qwen2ForCausalLM:
    cfg = {"vocab_size": 128, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
           "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
           "max_position_embeddings": 128, "tie_word_embeddings": True, "pad_token_id": 0,
           "eos_token_id": 0, **overrides}
    torch.manual_seed(3)
    return Qwen2ForCausalLM(Qwen2Config(**cfg)).float().eval()


@torch.inference_mode()
def both_logits(model, rows, steps: int, joined: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """Greedy decode driven by the generic path's logits; both decoders are fed the same tokens.
    Returns the per-step logits (B, steps, V) of the generic path and of the fast path (its
    joined q|k|v, gate|up GEMMs when `joined`)."""
    ids, mask = left_pad(rows, 0)
    cache_kw = HFEngine(model, _CharTok(), fast_decode=False)._cache_kw
    generic = _ModelDecoder(model, cache_kw, ids, mask)
    fast = qd.Qwen2Decoder(model, ids, mask, steps, joined=qd.JoinedWeights(model) if joined else None)
    a, b = [generic.prefill()], [fast.prefill()]
    for _ in range(steps - 1):
        token = a[-1].argmax(-1)
        a.append(generic.step(token))
        b.append(fast.step(token))
    return torch.stack(a, 1), torch.stack(b, 1)


class _CharTok:
    """Just enough of a tokenizer for HFEngine's constructor."""
    eos_token_id = 0
    pad_token_id = 0


@pytest.mark.parametrize("joined", [False, True])
@pytest.mark.parametrize("which", ["tiny_model", "gqa_model"])
def test_per_step_logits_match_the_model_forward(which, joined, request):
    model = request.getfixturevalue(which)
    assert qd.unsupported_reason(model) is None
    # Qwen2 starts its q/k/v biases at zero: random ones, so that a swapped bias shows.
    with torch.no_grad():
        for layer in model.model.layers:
            for proj in (layer.self_attn.q_proj, layer.self_attn.k_proj, layer.self_attn.v_proj):
                proj.bias.normal_(0.0, 0.5, generator=torch.Generator().manual_seed(proj.bias.numel()))
    generic, fast = both_logits(model, ROWS, steps=12, joined=joined)
    assert (generic - fast).abs().max().item() <= 1e-5
    assert torch.equal(generic.argmax(-1), fast.argmax(-1))
    # The logits do move from step to step (a constant model would pass the checks above).
    assert (generic[:, 1:] - generic[:, :-1]).abs().max().item() > 1e-2


def _engine_pair(model, tokenizer, seed=11):
    return (HFEngine(copy.deepcopy(model), tokenizer, seed=seed),
            HFEngine(copy.deepcopy(model), tokenizer, seed=seed, fast_decode=False))


def _assert_same_rollouts(a, b):
    for ga, gb in zip(a, b, strict=True):
        for ra, rb in zip(ga, gb, strict=True):
            assert ra.completion_ids == rb.completion_ids
            assert ra.logprobs == pytest.approx(rb.logprobs, abs=1e-5)
            assert (ra.text, ra.finish_reason) == (rb.text, rb.finish_reason)


@pytest.mark.parametrize("params", [
    SamplingParams(max_new_tokens=24, temperature=0.0),
    SamplingParams(max_new_tokens=24, temperature=1.0),
    SamplingParams(max_new_tokens=24, temperature=0.7, top_p=0.9, min_new_tokens=5, stop=["\n"]),
], ids=["greedy", "sampled", "top_p-min-stop"])
def test_engine_rollouts_are_those_of_the_generic_path(tiny_model, tokenizer, params, monkeypatch):
    fast, generic = _engine_pair(tiny_model, tokenizer)
    calls = []
    monkeypatch.setattr(qd.Qwen2Decoder, "step", _counting(qd.Qwen2Decoder.step, calls))
    a = fast.generate(PROMPTS, 3, params)
    used = len(calls)
    b = generic.generate(PROMPTS, 3, params)
    assert used > 0 and len(calls) == used  # the fast engine used the fast path, the other did not
    _assert_same_rollouts(a, b)
    # Both engines' generators drew the same number of values (the next draw agrees).
    assert torch.equal(torch.rand(4, generator=fast.generator), torch.rand(4, generator=generic.generator))


@pytest.mark.parametrize("which, block", [("gqa_model", "mlp_joined"), ("wide_model", "mlp")])
def test_compiled_blocks_sample_the_eager_rollouts(which, block, tokenizer, monkeypatch, request):
    """HFEngine(compile_decode=True) runs the layer blocks through torch.compile, and samples the
    eager engine's tokens with log-probs within fp32 rounding (fused elementwise ops): the joined
    blocks for a model up to JOIN_MAX_HIDDEN wide, the split ones above."""
    model = request.getfixturevalue(which)
    compiled = qd.compiled_blocks()
    assert qd.compiled_blocks() is compiled and compiled.mlp is not qd.mlp  # one compiled set per process
    calls = []
    monkeypatch.setattr(compiled, block, _counting(getattr(compiled, block), calls))
    params = SamplingParams(max_new_tokens=12, min_new_tokens=12, temperature=1.0)
    a = HFEngine(copy.deepcopy(model), tokenizer, seed=5, compile_decode=True).generate(PROMPTS, 2, params)
    b = HFEngine(copy.deepcopy(model), tokenizer, seed=5).generate(PROMPTS, 2, params)
    assert calls  # the compiled blocks were the ones called
    _assert_same_rollouts(a, b)


def _counting(fn, calls):
    def wrapped(*args, **kwargs):
        calls.append(1)
        return fn(*args, **kwargs)
    return wrapped


def test_contract_engine_default_takes_the_fast_path(tiny_model, tokenizer, monkeypatch):
    """test_contract.py builds `HFEngine(model, tok, seed=0)` on the shipped model: that engine
    must decode through qwen2_decode, so the contract tests cover it."""
    calls = []
    monkeypatch.setattr(qd.Qwen2Decoder, "prefill", _counting(qd.Qwen2Decoder.prefill, calls))
    HFEngine(tiny_model, tokenizer, seed=0).generate(["1+1="], 2, SamplingParams(max_new_tokens=3))
    assert calls == [1]


@pytest.mark.parametrize("which, joins", [("gqa_model", True), ("wide_model", False)])
def test_weights_changed_in_place_are_seen(which, joins, tokenizer, request):
    """Both decodes follow the live parameters, the joined q|k|v and gate|up copies (layers up
    to JOIN_MAX_HIDDEN wide) and the split GEMMs: load_weights, and an in-place change with no
    load_weights (an optimiser step on a shared model)."""
    model = request.getfixturevalue(which)
    params = SamplingParams(max_new_tokens=10, temperature=0.0)
    fast, generic = _engine_pair(model, tokenizer)
    fast.generate(PROMPTS[:2], 1, params)  # builds the joined weights, if any
    assert (fast._joined is not None) is joins
    new = {k: v * 1.5 if "proj" in k else v for k, v in model.state_dict().items()}
    fast.load_weights(new, 1)
    generic.load_weights(new, 1)
    _assert_same_rollouts(fast.generate(PROMPTS, 1, params), generic.generate(PROMPTS, 1, params))
    with torch.no_grad():
        for model in (fast.model, generic.model):
            model.model.layers[0].mlp.up_proj.weight.mul_(-2.0)
            model.model.layers[1].self_attn.k_proj.bias.add_(0.5)
    _assert_same_rollouts(fast.generate(PROMPTS, 1, params), generic.generate(PROMPTS, 1, params))


def test_fp32_head_is_honoured_in_bf16(tiny_model):
    model = tiny_model.to(torch.bfloat16)
    use_fp32_head(model)
    generic, fast = both_logits(model, ROWS, steps=6)
    assert fast.dtype == torch.float32 and generic.dtype == torch.float32
    # Same bf16 arithmetic in the same order; an fp32 head on a bf16 hidden state.
    assert (generic - fast).abs().max().item() <= 1e-5


def test_linear_rope_scaling_and_no_bias_match():
    model = _qwen2(rope_parameters={"rope_type": "linear", "factor": 2.0, "rope_theta": 500.0})
    generic, fast = both_logits(model, ROWS, steps=8)
    assert (generic - fast).abs().max().item() <= 1e-5


@pytest.mark.parametrize("make, reason", [
    (lambda: _qwen2(rope_parameters={"rope_type": "dynamic", "factor": 2.0, "rope_theta": 1e4}), "rope type 'dynamic'"),
    (lambda: _qwen2(hidden_act="gelu"), "hidden_act"),
    (lambda: _qwen2(use_sliding_window=True, sliding_window=4, max_window_layers=0), "sliding-window"),
    (lambda: _qwen2().train(), "training mode"),
])
def test_unsupported_qwen2_variants_are_refused(make, reason):
    assert reason in (qd.unsupported_reason(make()) or "")


def test_adapted_projection_is_refused():
    model = _qwen2()
    model.model.layers[1].self_attn.q_proj.forward = lambda x: x  # what an adapter could do
    assert "layer 1" in qd.unsupported_reason(model)


def test_other_architectures_fall_back(tokenizer, monkeypatch):
    torch.manual_seed(0)
    llama = LlamaForCausalLM(LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128,
                                         num_hidden_layers=1, num_attention_heads=4, num_key_value_heads=2,
                                         pad_token_id=0, eos_token_id=0)).eval()
    assert "LlamaForCausalLM" in qd.unsupported_reason(llama)
    calls = []
    monkeypatch.setattr(qd.Qwen2Decoder, "prefill", _counting(qd.Qwen2Decoder.prefill, calls))
    out = HFEngine(llama, tokenizer, seed=0).generate(["1+1="], 2, SamplingParams(max_new_tokens=4, min_new_tokens=4))
    assert calls == [] and all(len(r.completion_ids) == 4 for r in out[0])


def test_the_fallback_is_logged_once_per_process_and_the_fused_path_not_at_all(tokenizer, gqa_model, monkeypatch,
                                                                              caplog):
    import rlvr.engines.hf as hf

    monkeypatch.setattr(hf, "_said", set())  # as in a fresh process
    llama = LlamaForCausalLM(LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128,
                                         num_hidden_layers=1, num_attention_heads=4, num_key_value_heads=2,
                                         pad_token_id=0, eos_token_id=0)).eval()
    params = SamplingParams(max_new_tokens=2)
    with caplog.at_level("WARNING", logger="rlvr.engines.hf"):
        HFEngine(gqa_model, tokenizer, seed=0).generate(["1+1="], 2, params)
        assert caplog.records == []
        for _ in range(2):  # two engines, two calls each: one line
            engine = HFEngine(llama, tokenizer, seed=0)
            engine.generate(["1+1="], 2, params)
            engine.generate(["2+2="], 2, params)
    [record] = caplog.records
    assert "LlamaForCausalLM" in record.getMessage() and "generic path" in record.getMessage()
    caplog.clear()
    HFEngine(llama, tokenizer, seed=0, fast_decode=False).generate(["1+1="], 1, params)
    assert caplog.records == []  # turned off on purpose: nothing to say


def test_stepping_past_max_new_tokens_is_a_clear_error(gqa_model):
    ids, mask = left_pad(ROWS, 0)
    with torch.inference_mode():
        decoder = qd.Qwen2Decoder(gqa_model, ids, mask, 2)
        token = decoder.prefill().argmax(-1)
        decoder.step(token)
        decoder.step(token)
        with pytest.raises(RlvrError, match="2 new-token slots"):
            decoder.step(token)
