"""A character-level tokenizer: one token per printable ASCII character.

Layout (also the one `../shared/bench/WORKLOAD.md` fixes for the benchmark):
id 0 `<|endoftext|>` (EOS and PAD), 1 `<unk>`, 2 newline, 3..97 printable ASCII 32..126,
98..vocab_size-1 reserved specials. Prompts are padded on the left.

Why it is a `Qwen2Tokenizer` spelled in the byte-level alphabet: the tiny models are Qwen2s,
and for a folder whose config.json says `model_type = "qwen2"` transformers 5 ignores the
saved `tokenizer_class` (qwen2 is in its MODELS_WITH_INCORRECT_HUB_TOKENIZER_CLASS) and makes a
`Qwen2Tokenizer`, which rebuilds a byte-level BPE from tokenizer.json's vocabulary and merges
alone, dropping the saved pre-tokenizer and decoder. A plain character vocabulary ("\\n", " ")
then loses every newline and space, which the byte-level alphabet writes "Ċ" and "Ġ". Writing
the vocabulary in that alphabet with no merges makes the rebuild the identity: the folder
gives the same ids through rlvr, `AutoTokenizer.from_pretrained(folder)` and the raw
`tokenizers` file. The ids are those of the former word-level tokenizer, so weights trained on
it stay valid.

Characters outside printable ASCII and newline (a tab, "é") are dropped, not mapped to
`<unk>`: a Qwen2 BPE has no unknown token, and the loaders must agree on every text. `<unk>`
keeps id 1 as a special token.
"""

from __future__ import annotations

from transformers import Qwen2Tokenizer

EOS_TOKEN = "<|endoftext|>"
UNK_TOKEN = "<unk>"
# The byte-level alphabet (GPT-2's bytes_to_unicode) moves the non-printing bytes up by 256;
# printable ASCII 33..126 stand for themselves.
BYTE_LEVEL = {" ": "\u0120", "\n": "\u010a"}


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


def build_char_tokenizer(vocab_size: int = 128) -> Qwen2Tokenizer:
    """The character tokenizer as the `Qwen2Tokenizer` a saved folder loads back as."""
    vocab = {BYTE_LEVEL.get(ch, ch): i for ch, i in char_vocab(vocab_size).items()}
    reserved = [t for t in vocab if t.startswith("<|reserved_")]
    return Qwen2Tokenizer(
        vocab=vocab,
        merges=[],
        unk_token=UNK_TOKEN,
        eos_token=EOS_TOKEN,
        pad_token=EOS_TOKEN,
        extra_special_tokens=reserved,
        padding_side="left",
        model_max_length=512,
    )
