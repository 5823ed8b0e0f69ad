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
# Built by scripts/make_chat_model.py (trained here with `tokenizers`, nothing downloaded).
def _chat_model_script():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_chat_model", REPO / "scripts" / "make_chat_model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def bpe_tokenizer():
    return _chat_model_script().bpe_tokenizer()


@pytest.fixture(scope="session")
def bpe_models(bpe_tokenizer, tmp_path_factory):
    """{"qwen2": folder, "llama": folder}: tiny random models with the BPE tokenizer."""
    root = tmp_path_factory.mktemp("bpe_models")
    save = _chat_model_script().save_chat_model
    return {arch: save(root / arch, bpe_tokenizer, arch) for arch in ("qwen2", "llama")}
