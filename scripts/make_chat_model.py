"""A tiny random chat model with a BPE tokenizer, built here (nothing downloaded): a stand-in
for a Hugging Face instruct model folder in the tests and in docs/bring-your-own.md.

    python scripts/make_chat_model.py OUT_FOLDER [--arch qwen2|llama]

The tokenizer is byte-level BPE trained with `tokenizers` on arithmetic lines, with the special
tokens <|endoftext|> (EOS, also padding), <|im_start|> and <|im_end|> and a ChatML-style chat
template. The model has random weights (2 layers, width 32). The Llama one also lists the
end-of-turn id in its generation config, as HF instruct models do; the Qwen2 one leaves the
engine to find it in the chat template. tests/conftest.py builds its fixtures with this file.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

CHAT_TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
                 "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def corpus() -> list[str]:
    lines = [f"{a}+{b}={a + b}" for a in range(10, 40) for b in range(10, 30)]
    return lines + ["You are a careful calculator.", "Answer with the number only.", "user", "assistant",
                    "system", "What is 12+34?", "The answer is 46."]


def bpe_tokenizer(lines: list[str] | None = None, vocab_size: int = 400):
    """The tokenizer trained on `lines` (default: `corpus()`) as a transformers fast tokenizer,
    its chat template set."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast
    from transformers.models.qwen2.tokenization_qwen2 import PRETOKENIZE_REGEX

    core = Tokenizer(models.BPE())
    # Qwen2's normaliser and pre-tokenizer, not GPT-2's: transformers 5 loads the Qwen2 folder's
    # tokenizer as a Qwen2Tokenizer, which keeps only the vocabulary and merges and splits text
    # its own way (each digit alone); trained on that split, both folders load back the ids
    # this tokenizer gives.
    core.normalizer = normalizers.NFC()
    core.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(PRETOKENIZE_REGEX), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    core.train_from_iterator(corpus() if lines is None else lines, trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=core, eos_token=SPECIALS[0], pad_token=SPECIALS[0],
                                  additional_special_tokens=SPECIALS[1:])
    tok.chat_template = CHAT_TEMPLATE
    return tok


def save_chat_model(folder: Path, tokenizer, arch: str, seed: int = 0, hidden: int = 32, layers: int = 2) -> Path:
    """A tiny random `arch` ("qwen2" or "llama") over `tokenizer`, saved with it in `folder`."""
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    shape = dict(vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=layers,
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--arch", choices=["qwen2", "llama"], default="qwen2")
    args = parser.parse_args()
    save_chat_model(args.out, bpe_tokenizer(), args.arch)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
