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


# --- The sandbox tests a machine without bubblewrap skips (issue 10) ---------------------------
# Every such skip's reason starts with this (tests/rewards/test_sandbox.py and the others that
# call rlvr.rewards.sandbox.bwrap_unavailable()).
SANDBOX_SKIP = "bubblewrap cannot sandbox here"
ENABLE_SANDBOX = "sudo apt-get install bubblewrap"


def sandbox_skip_summary(reasons: list[str]) -> str | None:
    """The closing line for the skips whose reason starts with SANDBOX_SKIP, or None."""
    skipped = [r for r in reasons if SANDBOX_SKIP in r]
    if not skipped:
        return None
    why = skipped[0].split(SANDBOX_SKIP, 1)[1].lstrip(": ") or "bubblewrap is missing or not allowed"
    return (f"{len(skipped)} sandbox test{'s' if len(skipped) > 1 else ''} skipped ({why}); "
            f"to run them: `{ENABLE_SANDBOX}` (and allow unprivileged user namespaces), then make test")


def pytest_unconfigure(config):
    """After pytest's own last line, so that it is the last thing `make test` prints."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return
    reasons = []
    for report in reporter.stats.get("skipped", []):
        longrepr = report.longrepr
        reasons.append(longrepr[2] if isinstance(longrepr, tuple) else str(longrepr))
    line = sandbox_skip_summary(reasons)
    if line is not None:
        reporter.write_line(line)


@pytest.fixture
def learned_batches(monkeypatch):
    """(groups, batch) of every training step of a run in this test, taken at the learner."""
    from rlvr.orchestrate.learner import Learner

    seen, learn = [], Learner.learn

    def recording(self, groups, steps_done):
        learned = learn(self, groups, steps_done)
        seen.append((groups, learned.batch))
        return learned

    monkeypatch.setattr(Learner, "learn", recording)
    return seen
