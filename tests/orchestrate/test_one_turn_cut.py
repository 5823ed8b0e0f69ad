"""OneTurnSource's cut turns under dynamic sampling's refill: a turn is scored as cut at the
budget only when it was cut, even after earlier rounds' cut groups were dropped and freed (their
id() may be taken by a later round's rollouts)."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from rlvr.config import load_config
from rlvr.errors import ConfigError
from rlvr.orchestrate.one_turn_source import OneTurnSource
from rlvr.types import Rollout, Sample

REPO = Path(__file__).resolve().parents[2]
PROMPT_TOKENS, BUDGET = 12, 20  # room for 8 completion tokens


class Tokenizer:
    def __call__(self, text, add_special_tokens=False):
        return {"input_ids": [1] * PROMPT_TOKENS}

    def decode(self, ids, skip_special_tokens=True):
        return "x" * len(ids)


class Engine:
    """The first `long_rounds` calls of a draw give 10-token turns (cut to 8, all scored 0: a
    zero-variance group, dropped), then 3-token turns "0" and "1" (a group with variance)."""

    generator, policy_version, long_rounds = torch.Generator(), 0, 20

    def __init__(self):
        self.calls = 0

    def generate(self, prompts, n, params):
        self.calls += 1
        k = 10 if self.calls <= self.long_rounds else 3
        return [[Rollout((1,) * PROMPT_TOKENS, tuple(range(k)), (0.0,) * k, str(j % 2), "length" if k == 10 else "stop")
                 for j in range(n)] for _ in prompts]


def test_an_uncut_turn_after_dropped_cut_groups_is_scored():
    config = load_config(REPO / "recipes" / "demo.toml", [
        'env.kind="single_turn"', f"env.max_total_tokens={BUDGET}", "sampling.max_new_tokens=10",
        'sampling.zero_variance="refill"', "sampling.max_refill_rounds=30", "sampling.prompts_per_step=1",
        "sampling.group_size=2"])
    engine = Engine()
    parts = SimpleNamespace(train_set=[Sample(f"p{i}", "1") for i in range(50)], engine=engine,
                            tokenizer=Tokenizer(), sampling=None, reward_fn=lambda response, gold: float(response == gold))
    source = OneTurnSource(config, parts, SimpleNamespace(stage=lambda *a: nullcontext()))
    for step in range(1, 16):
        engine.calls = 0
        (group,) = source.draw(step).groups
        # the refill round's 3-token turns are whole: rewards 0 and 1, answered, never "max_tokens"
        assert [len(s.rollout.completion_ids) for s in group] == [3, 3], step
        assert sorted(s.reward for s in group) == [0.0, 1.0], step
        assert all(s.episode["stop_reason"] == "answered" for s in group), step


def test_a_budget_no_prompt_fits_in_is_one_line_naming_the_key():
    config = load_config(REPO / "recipes" / "demo.toml", [
        'env.kind="single_turn"', f"env.max_total_tokens={PROMPT_TOKENS}", "sampling.max_new_tokens=10"])
    parts = SimpleNamespace(train_set=[Sample(f"p{i}", "1") for i in range(50)], engine=Engine(),
                            tokenizer=Tokenizer(), sampling=None, reward_fn=lambda response, gold: 1.0)
    source = OneTurnSource(config, parts, SimpleNamespace(stage=lambda *a: nullcontext()))
    with pytest.raises(ConfigError, match=r"env.max_total_tokens = 12 leaves no room to generate: every prompt"):
        source.draw(1)
