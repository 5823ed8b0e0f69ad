"""The engine stops on the chat template's end-of-turn token, and the ids it sampled are the
ones rlvr trains on, even where decoding then encoding the text would give other ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from rlvr.engines import HFEngine, SamplingParams
from rlvr.engines.loading import load_model, load_tokenizer
from rlvr.engines.stop_tokens import end_of_turn_id, stop_token_ids
from rlvr.train.batching import collate

TINY = Path(__file__).resolve().parents[2] / "models" / "tiny-arith"


def test_the_end_of_turn_token_is_read_from_the_template(bpe_tokenizer):
    im_end = bpe_tokenizer.convert_tokens_to_ids("<|im_end|>")
    assert end_of_turn_id(bpe_tokenizer) == im_end
    assert stop_token_ids(bpe_tokenizer) == (bpe_tokenizer.eos_token_id, im_end)
    plain = bpe_tokenizer.__class__(tokenizer_object=bpe_tokenizer.backend_tokenizer, eos_token="<|endoftext|>")
    plain.chat_template = "{% for m in messages %}{{ m['content'] }}\n\n{% endfor %}"  # plain text closes a turn
    assert end_of_turn_id(plain) is None
    plain.chat_template = "{{ raise_exception('roles must alternate') }}"
    assert end_of_turn_id(plain) is None
    assert stop_token_ids(load_tokenizer(TINY), load_model(TINY)) == (0,)  # no template: EOS alone


def test_the_generation_config_eos_list_counts_too(bpe_tokenizer, bpe_models):
    no_template = load_tokenizer(bpe_models["llama"])
    no_template.chat_template = None
    im_end = bpe_tokenizer.convert_tokens_to_ids("<|im_end|>")
    assert stop_token_ids(no_template, load_model(bpe_models["llama"])) == (0, im_end)
    assert stop_token_ids(no_template, load_model(bpe_models["qwen2"])) == (0,)


def letter_merge(tok) -> tuple[str, str]:
    """Two letter tokens whose concatenation BPE encodes as one token. Letters, because the
    tokenizer transformers loads for a Qwen2 folder (Qwen2Tokenizer) splits digits apart."""
    merges = json.loads(tok.backend_tokenizer.to_str())["model"]["merges"]
    for pair in merges:
        left, right = pair.split(" ") if isinstance(pair, str) else pair
        if left.isalpha() and right.isalpha() and len(tok(left + right, add_special_tokens=False)["input_ids"]) == 1:
            return left, right
    raise AssertionError("the test tokenizer has no letter merge")


def forced(model, token_ids: list[int]):
    """Make greedy decoding emit `token_ids` in order (a large logit on each in turn), through a
    hook on the LM head, so the test decides what the engine samples."""
    calls = iter(token_ids)

    def hook(module, inputs, logits):
        bias = torch.zeros(logits.shape[-1])
        bias[next(calls, token_ids[-1])] = 1e4
        return logits + bias

    model.lm_head.register_forward_hook(hook)
    return model


@pytest.mark.parametrize("arch", ["qwen2", "llama"])
def test_sampled_ids_are_kept_where_decode_then_encode_differs(bpe_tokenizer, bpe_models, arch):
    tok = load_tokenizer(bpe_models[arch])
    left, right = letter_merge(tok)  # e.g. "as" + "sistant"
    one, two, merged = (tok.convert_tokens_to_ids(t) for t in (left, right, left + right))
    im_end = tok.convert_tokens_to_ids("<|im_end|>")
    assert tok(left + right, add_special_tokens=False)["input_ids"] == [merged]  # BPE merges the two
    model = forced(load_model(bpe_models[arch]), [one, two, im_end, one])
    engine = HFEngine(model, tok, fast_decode=False)
    prompt = tok.apply_chat_template([{"role": "user", "content": "6+6="}], tokenize=False, add_generation_prompt=True)
    [[rollout]] = engine.generate([prompt], 1, SamplingParams(max_new_tokens=8, temperature=0))
    # Stopped on the template's end-of-turn token, which is kept in the ids and not in the text.
    assert rollout.completion_ids == (one, two, im_end) and rollout.finish_reason == "stop"
    assert rollout.text == left + right
    # Re-encoding the text gives [merged]: a sequence the policy never sampled.
    retokenized = tok(rollout.text, add_special_tokens=False)["input_ids"]
    assert retokenized == [merged] != list(rollout.completion_ids[:2])
    # The training batch holds the sampled ids, and the engine's log-prob of each.
    batch = collate([rollout], torch.zeros(1), torch.zeros(1, dtype=torch.long), tok.pad_token_id)
    assert batch.input_ids[0, batch.prompt_len:].tolist() == [one, two, im_end]
    assert batch.old_logp[0].tolist() == pytest.approx(list(rollout.logprobs))


def test_min_new_tokens_bans_every_stop_id(bpe_models):
    tok = load_tokenizer(bpe_models["qwen2"])
    im_end = tok.convert_tokens_to_ids("<|im_end|>")
    model = forced(load_model(bpe_models["qwen2"]), [im_end, im_end, im_end])
    engine = HFEngine(model, tok, fast_decode=False)
    [[rollout]] = engine.generate(["1+1="], 1, SamplingParams(max_new_tokens=4, temperature=0, min_new_tokens=2))
    assert im_end not in rollout.completion_ids[:2] and tok.eos_token_id not in rollout.completion_ids[:2]
    assert rollout.completion_ids[2] == im_end and rollout.finish_reason == "stop"
