"""Readers of `rlvr eval`'s arguments that both of its paths (single-turn: eval_command.py,
episodes: eval_episodes.py) use: the k values and the tokenizer folder. Torch-free."""

from __future__ import annotations

from pathlib import Path

from rlvr.errors import ConfigError


def parse_ks(text: str | None, n: int) -> tuple[int, ...]:
    """'1,4,16' → (1, 4, 16); None → powers of 2 up to n, and n itself."""
    if text is None:
        return tuple(sorted({2 ** i for i in range(n.bit_length()) if 2 ** i <= n} | {n}))
    try:
        ks = tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    except ValueError:
        raise ConfigError(f"--k {text!r}: expected comma-separated integers like 1,4,16") from None
    if not ks or ks[0] < 1:
        raise ConfigError(f"--k {text!r}: every k must be a positive integer")
    return ks


TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json")


def tokenizer_folder(model: str, tokenizer: str | None) -> str:
    """--tokenizer if given, else the model folder, which must then hold tokenizer files."""
    if tokenizer is not None:
        return tokenizer
    if Path(model).is_dir() and not any((Path(model) / f).is_file() for f in TOKENIZER_FILES):
        raise ConfigError(f"{model}: no tokenizer files here (a checkpoint of an rlvr older than 2026-12-01?); "
                          f"pass --tokenizer BASE_MODEL_DIR")
    return model
