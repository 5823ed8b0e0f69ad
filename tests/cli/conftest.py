"""Fixtures shared by the CLI tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def random_judge(tmp_path_factory) -> Path:
    """A 1-layer random Qwen2 with a character tokenizer ('y' says yes, 'n' says no) and a long
    enough context for the judge prompt (the shipped tiny model's is 64 tokens)."""
    import torch
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    folder = tmp_path_factory.mktemp("random-judge")
    vocab = {w: i for i, w in enumerate(["<unk>", "<eos>", "\n", *map(chr, range(32, 127))])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", eos_token="<eos>").save_pretrained(folder)
    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=len(vocab), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=4096)
    Qwen2ForCausalLM(config).save_pretrained(folder)
    return folder
