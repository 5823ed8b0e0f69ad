"""`eval.keep_best` names a metric the run logs: an environment run's sampled episodes add
`eval/success_rate` (success@1), a single-turn run has no such key, and a run that never
evaluates (eval.size = 0) has nothing to keep (config/coherence.py keep_best_metrics)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlvr.config import load_config
from rlvr.config.coherence import keep_best_metrics
from rlvr.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
ENV = REPO / "recipes" / "env_guess_number.toml"
SAMPLED = ["eval.size=3", "eval.samples=4", "eval.k=[1, 4]"]


def test_an_env_run_with_sampled_episodes_keeps_the_best_success_rate_or_pass_at_k():
    for name in ("eval/success_rate", "eval/pass@4", "eval/pass@1", "eval/accuracy"):
        assert load_config(ENV, [*SAMPLED, f'eval.keep_best="{name}"']).eval.keep_best == name
    assert keep_best_metrics(load_config(ENV, SAMPLED)) == {"eval/accuracy", "eval/pass@1", "eval/pass@4",
                                                            "eval/success_rate"}


@pytest.mark.parametrize("recipe, overrides, name", [
    (ENV, ["eval.size=3"], "eval/success_rate"),  # no sampled episodes: only the greedy eval/accuracy
    (ENV, SAMPLED, "eval/env/turns_mean"),  # a count, not a score: its maximum is no "best"
    (ENV, SAMPLED, "eval/disagree_frac"),
    (None, SAMPLED, "eval/success_rate"),  # a single-turn run logs no success rate
    # env.kind = "single_turn" evaluates as a single-turn run (greedy accuracy, pass@k): no success rate either
    (None, [*SAMPLED, 'env.kind="single_turn"', "env.max_total_tokens=512"], "eval/success_rate"),
])
def test_keys_the_run_does_not_log_as_a_score_are_refused_naming_the_valid_ones(recipe, overrides, name):
    with pytest.raises(ConfigError, match=f"eval.keep_best = '{name}' is not an eval metric of this run") as info:
        load_config(recipe, [*overrides, f'eval.keep_best="{name}"'])
    assert "eval/accuracy" in str(info.value)


def test_keep_best_without_an_evaluation_is_refused():
    with pytest.raises(ConfigError, match=r"eval.keep_best = 'eval/accuracy' needs eval.size > 0"):
        load_config(ENV, ["eval.size=0", 'eval.keep_best="eval/accuracy"'])
