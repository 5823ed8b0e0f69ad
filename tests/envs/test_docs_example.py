"""docs/environments.md's example runs, and the page shows it as it is in the file."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import torch

from rlvr.engines.hf import HFEngine
from rlvr.models.tiny_qwen2 import tiny_qwen2

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "docs" / "examples" / "reverse_env.py"


def load_example():
    spec = importlib.util.spec_from_file_location("reverse_env", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_page_shows_the_example_verbatim():
    assert EXAMPLE.read_text() in (REPO / "docs" / "environments.md").read_text()


def test_the_example_learns_from_its_hint(scripted, char_tok):
    example = load_example()

    def policy(text: str) -> str:  # first the word as given, then reversed once told "No."
        word = text.split("'")[1]
        return word[::-1] if "No." in text else word

    episodes = example.play(scripted(policy), char_tok)
    assert [ep.stop_reason for ep in episodes] == ["reversed"] * 4
    assert [len(ep.trajectory.turns) for ep in episodes] == [2] * 4
    assert all(ep.metrics["reverse/misses"] == 1.0 and ep.reward == 1.0 for ep in episodes)


def test_the_example_runs_on_a_real_engine(char_tok):
    torch.manual_seed(0)
    model = tiny_qwen2(hidden_size=32, intermediate_size=64, num_layers=1, num_heads=4, num_kv_heads=2)
    episodes = load_example().play(HFEngine(model, char_tok, seed=0), char_tok)
    assert {ep.stop_reason for ep in episodes} <= {"reversed", "max_turns", "max_tokens"}
    assert all(ep.trajectory.turns for ep in episodes)
