"""Fakes for the environment tests: a scripted engine on the char-level tokenizer."""

from __future__ import annotations

import pytest

from rlvr.engines.base import SamplingParams
from rlvr.models.char_tokenizer import build_char_tokenizer
from rlvr.types import Rollout


class ScriptedEngine:
    """`generate_ids` answers each row with `policy(decoded row)` + EOS, log-prob -0.5 a token;
    records the rows of every call (to count batched calls)."""

    def __init__(self, tokenizer, policy, version: int = 3):
        self.tokenizer, self.policy, self.version = tokenizer, policy, version
        self.calls: list[list[list[int]]] = []

    def generate_ids(self, rows: list[list[int]], params: SamplingParams) -> list[Rollout]:
        self.calls.append([list(r) for r in rows])
        out = []
        for row in rows:
            text = self.policy(self.tokenizer.decode(row))
            ids = self.tokenizer(text, add_special_tokens=False)["input_ids"] + [self.tokenizer.eos_token_id]
            out.append(Rollout(tuple(row), tuple(ids), (-0.5,) * len(ids), text, "stop", self.version))
        return out


@pytest.fixture(scope="session")
def char_tok():
    return build_char_tokenizer()


@pytest.fixture
def scripted(char_tok):
    return lambda policy: ScriptedEngine(char_tok, policy)
