"""Per-turn credit end to end: recipes/env_guess_number.toml with step rewards on and
env.credit = "per_turn" trains through the public API, and what the learner trains on is the
per-turn advantage of rlvr.envs.credit; its config rules refuse at load."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlvr.config import load_config
from rlvr.errors import ConfigError
from rlvr.orchestrate import train

REPO = Path(__file__).resolve().parents[2]
PER_TURN = ["env.closeness=0.2", "env.step_weight=0.5", 'env.credit="per_turn"', "env.turn_discount=0.9"]
SMALL = ["sampling.prompts_per_step=2", "sampling.group_size=4", "log.progress=none", "checkpoint.every_minutes=0",
         "train.steps=2"]


def test_per_turn_credit_reaches_the_learner(tmp_path, learned_batches):
    config = load_config(REPO / "recipes" / "env_guess_number.toml",
                         [f"run.output_dir={tmp_path}", *SMALL, *PER_TURN])
    rows = train(config).folder.read_metrics()
    assert [r["step"] for r in rows] == [1, 2]
    varied = 0
    for groups, batch in learned_batches:
        for i, s in enumerate(r for g in groups for r in g):
            n = len(s.rollout.completion_ids)
            expected = [a * m for a, m in zip(s.token_adv, s.rollout.loss_mask)]
            assert batch.adv[i, :n].tolist() == pytest.approx(expected, abs=1e-6)
            on_policy = {round(a, 6) for a, m in zip(s.token_adv, s.rollout.loss_mask) if m}
            varied += len(on_policy) > 1  # turns of one episode got different advantages
    assert varied > 0


CASES = {
    "per_turn_with_gae": (['algo.advantage="gae"', 'algo.baseline="none"', 'algo.scale="none"'],
                          "algo.advantage = 'gae' would be ignored"),
    "per_turn_with_kl_in_reward": (['algo.kl="k1"', "algo.kl_coef=0.1", 'algo.kl_placement="reward"'],
                                   "the turn returns carry no KL"),
    "per_turn_with_sequence_ratio": (['algo.ratio_level="sequence"'], "loses the per-turn credit"),
    "per_turn_with_length_weighted": (['algo.baseline="length_weighted"'], "no completion length to weight by"),
    "per_turn_with_gmpo": (['algo.surrogate="gmpo"'], "algo.surrogate = 'gmpo' needs one advantage per row"),
}


@pytest.mark.parametrize("extra, sentence", CASES.values(), ids=CASES.keys())
def test_per_turn_rules_refuse_at_load(extra, sentence):
    with pytest.raises(ConfigError) as info:
        load_config(REPO / "recipes" / "env_guess_number.toml", [*PER_TURN, *extra])
    assert sentence in str(info.value)


def test_a_discount_without_per_turn_credit_is_refused():
    with pytest.raises(ConfigError, match="env.turn_discount = 0.9 is read only by env.credit = 'per_turn'"):
        load_config(REPO / "recipes" / "env_guess_number.toml", ["env.turn_discount=0.9"])


def test_the_per_turn_overrides_load():
    assert load_config(REPO / "recipes" / "env_guess_number.toml", PER_TURN).env.credit == "per_turn"
