"""The chunked LM head (rlvr.train.logprobs): the log-probs, entropies and gradients of the
plain (B, T, V) path, without a (B, T, V) tensor kept for the backward; the plain path for a
model that does not split, with its reason said once."""

from __future__ import annotations

import copy
import logging
from pathlib import Path

import pytest
import torch
from torch.utils.checkpoint import checkpoint
from transformers import Gemma2Config, Gemma2ForCausalLM, LlamaConfig, LlamaForCausalLM

from rlvr.algo import Objective
from rlvr.config.schema import ModelSection
from rlvr.engines.loading import load_model
from rlvr.train import OptimConfig, Trainer
from rlvr.train.batching import collate
from rlvr.train.logprobs import (batch_logprobs, chunked_logprobs, completion_logits, completion_logprobs,
                                 token_entropy, token_logprobs)
from rlvr.train import logprobs
from rlvr.train.lora import AdaptersOff, wrap_lora
from rlvr.train.model_split import SplitModel, split_model
from rlvr.types import Rollout

TINY = Path(__file__).resolve().parents[2] / "models" / "tiny-arith"
VOCAB = 128


def tiny_llama(vocab=VOCAB) -> LlamaForCausalLM:
    torch.manual_seed(1)
    config = LlamaConfig(vocab_size=vocab, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    return LlamaForCausalLM(config)


def tiny_gemma2() -> Gemma2ForCausalLM:
    torch.manual_seed(2)
    config = Gemma2Config(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                          num_attention_heads=2, num_key_value_heads=1, head_dim=16, max_position_embeddings=64,
                          final_logit_softcapping=0.5)  # tight, so that capping moves these small logits
    return Gemma2ForCausalLM(config)


def random_batch(rows=5, seed=0):
    """Ragged prompts (left-padded) and completions (right-padded): 5 rows x T = 7 = 35 tokens."""
    g = torch.Generator().manual_seed(seed)
    rollouts = []
    for i in range(rows):
        prompt = tuple(torch.randint(1, VOCAB, (2 + i % 3,), generator=g).tolist())
        done = tuple(torch.randint(1, VOCAB, (7 - i % 4,), generator=g).tolist())
        rollouts.append(Rollout(prompt_ids=prompt, completion_ids=done, logprobs=(0.0,) * len(done),
                                text="", finish_reason="length"))
    return collate(rollouts, torch.randn(rows, generator=g), torch.arange(rows) // 2, 0)


def by_hand(model, batch, temperature):
    """The definitions, written out on the model's own logits: log softmax(z / tau) at the
    target, and H = -sum_v p_v log p_v, both with gradient. (B, T) each."""
    t = batch.completion_mask.shape[1]
    positions = (batch.attention_mask.cumsum(-1) - 1).clamp(min=0)
    logits = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask,
                   position_ids=positions).logits[:, -t - 1:-1, :].float() / temperature
    logp_all = torch.log_softmax(logits, dim=-1)
    targets = batch.input_ids[:, -t:]
    return logp_all.gather(-1, targets[..., None])[..., 0], -(logp_all.exp() * logp_all).sum(-1)


def logp_entropy_grads(model, batch, chunk, temperature, entropy_grad):
    """log-probs, entropies and the gradient of a loss that uses both (B, T); chunk None: by hand."""
    model = copy.deepcopy(model)
    if chunk is None:
        logp, entropy = by_hand(model, batch, temperature)
    else:
        logp, entropy = completion_logprobs(model, batch, temperature, chunk=chunk, entropy_grad=entropy_grad)
    w = torch.linspace(-1.0, 1.0, logp.numel()).view_as(logp) * batch.completion_mask
    loss = (w * logp).sum() + (0.3 * (w * entropy).sum() if entropy_grad else 0.0)
    loss.backward()
    return logp, entropy, torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])


MODELS = {"qwen2": lambda: load_model(TINY), "llama": tiny_llama}


@pytest.mark.parametrize("arch", sorted(MODELS))
@pytest.mark.parametrize("chunk", [3, 8, 1024])  # 35 tokens: 12 chunks, 5 chunks, one chunk
@pytest.mark.parametrize("temperature,entropy_grad", [(1.0, False), (0.7, True)])
def test_chunked_matches_the_plain_path(arch, chunk, temperature, entropy_grad):
    model, batch = MODELS[arch](), random_batch()
    assert isinstance(split_model(model), SplitModel)
    plain = logp_entropy_grads(model, batch, 0, temperature, entropy_grad)
    chunked = logp_entropy_grads(model, batch, chunk, temperature, entropy_grad)
    reference = logp_entropy_grads(model, batch, None, temperature, entropy_grad)
    torch.testing.assert_close(plain[2], reference[2], rtol=1e-5, atol=1e-6 * float(reference[2].abs().max()))
    assert plain[1].requires_grad == chunked[1].requires_grad == entropy_grad  # a (B,T,V) graph only if asked
    for name, a, b in zip(("logp", "entropy"), plain[:2], chunked[:2]):
        torch.testing.assert_close(a, reference[name == "entropy"], rtol=1e-5, atol=1e-5, msg=name)
        # one float32 ulp of the logits at most (a few-row matmul may round differently)
        torch.testing.assert_close(b, a, rtol=1e-6, atol=1e-6, msg=name)
    # the weight gradients sum over chunks in another order: equal to 1e-6 of their scale
    torch.testing.assert_close(chunked[2], plain[2], rtol=1e-6, atol=1e-6 * float(plain[2].abs().max()))
    if chunk >= 35:  # one chunk is the plain path: bit-identical (smaller chunks may take another
        # matmul kernel, whose rounding differs by CPU: within one ulp above)
        assert torch.equal(chunked[0], plain[0]) and torch.equal(chunked[1], plain[1])


def largest_saved(fn) -> int:
    """The most elements of any tensor autograd keeps for the backward while `fn` runs
    (outside checkpointed regions, whose tensors are recomputed, not kept)."""
    sizes = [0]

    def pack(t):
        sizes.append(t.numel())
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn()
    return max(sizes)


def test_no_full_logits_are_kept_for_the_backward(monkeypatch):
    model, batch = tiny_llama(vocab=4096), random_batch()
    n_tokens = batch.completion_mask.numel()  # 35
    plain = largest_saved(lambda: completion_logprobs(model, batch, chunk=0, entropy_grad=True))
    small = largest_saved(lambda: completion_logprobs(model, batch, chunk=8, entropy_grad=True))
    monkeypatch.setattr(logprobs, "REMAT_MIN_BYTES", 0)  # as if these 35 x 4096 logits were large
    chunked = largest_saved(lambda: completion_logprobs(model, batch, chunk=8, entropy_grad=True))
    assert plain >= n_tokens * 4096  # the (B, T, V) logits or their softmax
    assert chunked < 8 * 4096  # not even one chunk's logits: those are recomputed
    # 573 KB of logits, under REMAT_MIN_BYTES: each chunk's are kept, none recomputed
    assert 8 * 4096 <= small < n_tokens * 4096


@pytest.mark.parametrize("chunk,entropy_grad", [(3, False), (8, True)])
def test_recomputed_chunks_give_the_same_bits_as_kept_ones(monkeypatch, chunk, entropy_grad):
    model, batch = load_model(TINY), random_batch()
    kept = logp_entropy_grads(model, batch, chunk, 0.7, entropy_grad)
    monkeypatch.setattr(logprobs, "REMAT_MIN_BYTES", 0)
    calls = []
    monkeypatch.setattr(logprobs, "checkpoint", lambda *a, **k: calls.append(1) or checkpoint(*a, **k))
    recomputed = logp_entropy_grads(model, batch, chunk, 0.7, entropy_grad)
    assert len(calls) == -(-35 // chunk)  # every chunk went through the checkpoint
    for a, b in zip(kept, recomputed):
        assert torch.equal(a, b)


def test_trainer_gradients_and_metrics_do_not_depend_on_the_chunk():
    model, batch = load_model(TINY), random_batch(rows=6)
    objective = Objective(entropy_coef=0.01)
    runs = []
    for chunk in (0, 5):
        trainer = Trainer(copy.deepcopy(model), objective, OptimConfig(), micro_batch_size=3, logit_chunk=chunk)
        metrics = trainer.accumulate_gradients(batch)
        runs.append((metrics, torch.cat([p.grad.flatten() for p in trainer.model.parameters()])))
    (m_plain, g_plain), (m_chunked, g_chunked) = runs
    torch.testing.assert_close(g_chunked, g_plain, rtol=1e-6, atol=1e-6 * float(g_plain.abs().max()))
    for key in ("loss/policy", "policy/entropy"):
        assert m_chunked[key] == pytest.approx(m_plain[key], rel=1e-6), key
    with pytest.raises(ValueError, match="logit_chunk = -1"):
        Trainer(model, objective, OptimConfig(), micro_batch_size=3, logit_chunk=-1)


def test_lora_model_splits_and_matches():
    policy = wrap_lora(load_model(TINY), ModelSection(lora_rank=4), TINY, seed=0)
    with torch.no_grad():  # B = 0 at the start: give the adapters a value that shows
        for name, p in policy.named_parameters():
            if "lora_B" in name:
                p.normal_(0.0, 0.1)
    policy.eval()
    assert isinstance(split_model(policy), SplitModel)
    batch = random_batch()
    plain = logp_entropy_grads(policy, batch, 0, 1.0, False)
    chunked = logp_entropy_grads(policy, batch, 8, 1.0, False)
    torch.testing.assert_close(chunked[0], plain[0], rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(chunked[2], plain[2], rtol=1e-6, atol=1e-6 * float(plain[2].abs().max()))
    with torch.no_grad():
        assert (batch_logprobs(policy, batch) - batch_logprobs(AdaptersOff(policy), batch)).abs().max() > 1e-3


def test_model_that_changes_its_logits_takes_the_plain_path_and_says_why_once(caplog, monkeypatch):
    monkeypatch.setattr(logprobs, "_said", set())  # what earlier tests said is not this test's
    model, batch = tiny_gemma2(), random_batch()
    assert split_model(model) == "Gemma2ForCausalLM changes its logits after the head (config.final_logit_softcapping)"
    with caplog.at_level(logging.WARNING, logger="rlvr.train.logprobs"):
        plain = logp_entropy_grads(model, batch, 0, 1.0, True)
        asked = [logp_entropy_grads(model, batch, 8, 1.0, True) for _ in range(2)]
    for result in asked:  # the model's own forward, soft-capping included: the same numbers
        for a, b in zip(plain, result):
            assert torch.equal(a, b)
    said = [r.message for r in caplog.records if "final_logit_softcapping" in r.message]
    assert len(said) == 1 and "all positions at once" in said[0]
    # the head applied to the body's output would have missed the soft-capping
    split = SplitModel(body=model.get_decoder(), head=model.get_output_embeddings())
    with torch.no_grad():
        uncapped, _ = chunked_logprobs(split, batch, 1.0, 8, None)
    assert (uncapped - plain[0]).abs().max() > 1e-2


def test_wrappers_that_do_not_split_name_themselves():
    assert split_model(load_model(TINY).model).startswith("Qwen2Model has no output embeddings")
    assert split_model(object()) == "object is not a transformers PreTrainedModel"


def test_the_lora_reference_splits_with_its_adapters_off_and_equals_the_base_model():
    """The policy's own split, called with the adapters off: the same log-probs as the base
    model it wraps (chunked there too), even once the adapters have moved."""
    policy = wrap_lora(load_model(TINY), ModelSection(lora_rank=4), TINY, seed=0)
    with torch.no_grad():
        for name, p in policy.named_parameters():
            if "lora_B" in name:
                p.add_(0.5)  # adapters that change the output
    batch = random_batch()
    with torch.no_grad():
        reference, _ = completion_logprobs(AdaptersOff(policy), batch, chunk=8)
        base, _ = completion_logprobs(load_model(TINY), batch, chunk=8)
        adapted, _ = completion_logprobs(policy, batch, chunk=8)
    assert isinstance(split_model(AdaptersOff(policy)), SplitModel)
    assert torch.equal(reference, base) and not torch.equal(reference, adapted)


def test_plain_path_is_token_logprobs_and_token_entropy_bit_for_bit():
    model, batch = tiny_llama(), random_batch()
    with torch.no_grad():
        logits = completion_logits(model, batch)
        logp, entropy = completion_logprobs(model, batch, 0.7, chunk=0)
    assert torch.equal(logp, token_logprobs(logits, batch.input_ids[:, batch.prompt_len:], 0.7))
    assert torch.equal(entropy, token_entropy(logits, 0.7))


@pytest.mark.parametrize("fp32_head", [True, False])
def test_bf16_model_keeps_its_head_precision_when_chunked(fp32_head):
    model, batch = load_model(TINY, "bfloat16", fp32_head=fp32_head), random_batch()
    with torch.no_grad():
        plain, plain_h = completion_logprobs(model, batch, chunk=0)
        chunked, chunked_h = completion_logprobs(model, batch, chunk=8)
    assert chunked.dtype == torch.float32
    torch.testing.assert_close(chunked, plain, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(chunked_h, plain_h, rtol=1e-6, atol=1e-6)
