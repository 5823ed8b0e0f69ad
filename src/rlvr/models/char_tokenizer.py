"""A character-level tokenizer: one token per printable ASCII character.

Layout (also the one `../shared/bench/WORKLOAD.md` fixes for the benchmark):
id 0 `<|endoftext|>` (EOS and PAD), 1 `<unk>`, 2 newline, 3..97 printable ASCII 32..126,
98..vocab_size-1 reserved specials. Prompts are padded on the left.
"""

from __future__ import annotations

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

EOS_TOKEN = "<|endoftext|>"
UNK_TOKEN = "<unk>"


def char_vocab(vocab_size: int = 128) -> dict[str, int]:
    """Map each character to its id; the ids past printable ASCII are reserved specials."""
    chars = ["\n"] + [chr(c) for c in range(32, 127)]
    vocab = {EOS_TOKEN: 0, UNK_TOKEN: 1}
    vocab.update({ch: i + 2 for i, ch in enumerate(chars)})
    if vocab_size < len(vocab):
        raise ValueError(f"vocab_size {vocab_size} is below the {len(vocab)} base tokens")
    for i in range(len(vocab), vocab_size):
        vocab[f"<|reserved_{i}|>"] = i
    return vocab


def build_char_tokenizer(vocab_size: int = 128) -> PreTrainedTokenizerFast:
    """Build the tokenizer with `tokenizers` and wrap it for `transformers`."""
    vocab = char_vocab(vocab_size)
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token=UNK_TOKEN))
    # Split between every character, keeping each one as its own piece.
    core.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    core.decoder = decoders.Fuse()
    specials = [t for t in vocab if t.startswith("<|") or t == UNK_TOKEN]
    core.add_special_tokens(specials)
    return PreTrainedTokenizerFast(
        tokenizer_object=core,
        eos_token=EOS_TOKEN,
        pad_token=EOS_TOKEN,
        unk_token=UNK_TOKEN,
        padding_side="left",
        model_max_length=512,
    )
