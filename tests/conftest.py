"""Shared fixtures: the shipped tiny model, loaded once per session."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "models" / "tiny-arith"


@pytest.fixture(scope="session")
def tiny_pair():
    from rlvr.engines.loading import load_model, load_tokenizer

    torch.set_num_threads(2)
    return load_model(TINY), load_tokenizer(TINY)


@pytest.fixture
def tiny_model(tiny_pair):
    """A private copy, so a test may train it."""
    return copy.deepcopy(tiny_pair[0])


@pytest.fixture
def tokenizer(tiny_pair):
    return tiny_pair[1]


# --- A BPE tokenizer with a chat template, and tiny random models over it (issue 10) ----------
# Trained here with `tokenizers` (nothing downloaded): byte-level BPE, so every text encodes.
CHAT_TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
                 "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
BPE_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def _bpe_corpus() -> list[str]:
    lines = [f"{a}+{b}={a + b}" for a in range(10, 40) for b in range(10, 30)]
    return lines + ["You are a careful calculator.", "Answer with the number only.", "user", "assistant",
                    "system", "What is 12+34?", "The answer is 46."]


@pytest.fixture(scope="session")
def bpe_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=BPE_SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    core.train_from_iterator(_bpe_corpus(), trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=core, eos_token="<|endoftext|>", pad_token="<|endoftext|>",
                                  additional_special_tokens=BPE_SPECIALS[1:])
    tok.chat_template = CHAT_TEMPLATE
    return tok


def save_tiny_model(folder: Path, tokenizer, arch: str) -> Path:
    """A tiny random `arch` ("qwen2" or "llama") over `tokenizer`, saved with it in `folder`.
    The Llama one also lists the end-of-turn id in its generation config, as HF instruct
    models do; the Qwen2 one leaves the engine to find it in the chat template."""
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    shape = dict(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                 eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id, tie_word_embeddings=True)
    config_class, model_class = {"qwen2": (Qwen2Config, Qwen2ForCausalLM), "llama": (LlamaConfig, LlamaForCausalLM)}[arch]
    model = model_class(config_class(**shape))
    if arch == "llama":
        end_of_turn = tokenizer.convert_tokens_to_ids("<|im_end|>")
        model.generation_config = GenerationConfig(eos_token_id=[tokenizer.eos_token_id, end_of_turn],
                                                   pad_token_id=tokenizer.pad_token_id)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def bpe_models(bpe_tokenizer, tmp_path_factory):
    """{"qwen2": folder, "llama": folder}: tiny random models with the BPE tokenizer."""
    root = tmp_path_factory.mktemp("bpe_models")
    return {arch: save_tiny_model(root / arch, bpe_tokenizer, arch) for arch in ("qwen2", "llama")}
