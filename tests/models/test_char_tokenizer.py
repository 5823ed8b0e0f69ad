"""The character tokenizer gives the same ids however a model folder is loaded: through rlvr,
through plain `transformers.AutoTokenizer.from_pretrained(folder)` (users, vLLM) and through
the raw tokenizer.json, and those ids keep every space and newline.

Before the fix, a shipped folder (config.json model_type "qwen2") loaded through AutoTokenizer
as a Qwen2Tokenizer that encoded "a b\\nc" as [68, 69, 70] while build_char_tokenizer() gave
[68, 3, 69, 2, 70]."""

from __future__ import annotations

import json

from pathlib import Path

import pytest
from tokenizers import Tokenizer
from transformers import AutoTokenizer

from rlvr.config import load_config
from rlvr.engines.loading import load_tokenizer
from rlvr.models import build_char_tokenizer
from rlvr.orchestrate import train
from rlvr.orchestrate.export import export_checkpoint

REPO = Path(__file__).resolve().parents[2]
# The char-level folders: a byte-level vocabulary with no merges (models/tiny-spec is a trained BPE)
SHIPPED = sorted(p.parent for p in (REPO / "models").glob("*/tokenizer.json")
                 if not json.loads(p.read_text())["model"].get("merges"))
# Spaces, a run of spaces, a newline, a blank line, a trailing newline and every printable
# ASCII character: what prompts, tool calls and observations hold.
TEXT = "a b\nc  12+34=46\n\nprint(23*47)\n<obs>1081</obs>\n" + "".join(map(chr, range(32, 127))) + "\n"


def expected_ids(text: str) -> list[int]:
    """The documented layout, computed by hand: newline 2, ASCII code c at c - 29."""
    return [2 if ch == "\n" else ord(ch) - 29 for ch in text]


def assert_lossless(tok) -> None:
    ids = tok.encode(TEXT, add_special_tokens=False)
    assert ids == expected_ids(TEXT)
    assert tok.decode(ids) == TEXT


def test_the_built_tokenizer_has_the_documented_layout():
    tok = build_char_tokenizer()
    assert_lossless(tok)
    assert (tok.eos_token_id, tok.pad_token_id, tok.unk_token_id, len(tok)) == (0, 0, 1, 128)
    assert tok.encode("x<|reserved_100|>y<|endoftext|>", add_special_tokens=False) == [91, 100, 92, 0]
    assert tok.decode([91, 100, 92, 0], skip_special_tokens=True) == "xy"
    assert tok.encode("a\tb\u00e9", add_special_tokens=False) == [68, 69]  # outside the alphabet: dropped


@pytest.mark.parametrize("folder", SHIPPED, ids=lambda p: p.name)
def test_a_shipped_model_folder_loads_its_tokenizer_losslessly(folder):
    assert_lossless(AutoTokenizer.from_pretrained(folder))  # what users and vLLM call
    assert_lossless(load_tokenizer(folder))  # what a run calls
    assert Tokenizer.from_file(str(folder / "tokenizer.json")).encode(TEXT).ids == expected_ids(TEXT)


def test_there_are_shipped_char_models():
    assert {"tiny-arith", "tiny-env", "tiny-tool"} <= {p.name for p in SHIPPED}


def test_a_run_checkpoint_and_its_export_load_the_tokenizer_losslessly(tmp_path):
    overrides = [f"run.output_dir={tmp_path}", "run.name=tok", "train.steps=1", "sampling.prompts_per_step=2",
                 "sampling.group_size=2", "eval.size=0", "log.progress=none"]
    folder = train(load_config(REPO / "recipes" / "grpo.toml", overrides)).folder
    [checkpoint] = sorted(folder.checkpoints.glob("step_*"))
    exported = export_checkpoint(checkpoint, tmp_path / "export")
    for written in (checkpoint, exported):
        assert_lossless(AutoTokenizer.from_pretrained(written))
