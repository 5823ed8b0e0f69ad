"""The outcome estimators after GRPO's: OPO's length-weighted baseline (arXiv:2505.23585), the
pass@k best-of-group credit (arXiv:2503.19595) and GPG's signal-fraction scale
(arXiv:2504.02546). Every expected value below is worked out by hand in the comment beside it."""

from __future__ import annotations

import pytest
import torch

from rlvr.algo.advantages import BASELINES, outcome_advantages
from rlvr.algo.returns import reinforce_pp_advantages
from rlvr.orchestrate.batch_steps import ADVANTAGES, AdvantageSpec


def t(*values):
    return torch.tensor(values, dtype=torch.float64)


IDS = torch.tensor([0, 0, 0, 0, 1, 1, 2])


def test_length_weighted_baseline_by_hand():
    # Group 0: lengths 2, 4, 6, 8 and rewards 1, 0, 1, 0.5: b = (2 + 0 + 6 + 4) / 20 = 0.6.
    # Group 1: equal rewards -> 0. Group 2: a singleton -> 0.
    adv = outcome_advantages(t(1, 0, 1, 0.5, 2, 2, 3), IDS, baseline="length_weighted", scale="none",
                             lengths=t(2, 4, 6, 8, 1, 1, 3))
    torch.testing.assert_close(adv, t(0.4, -0.6, 0.4, -0.1, 0, 0, 0), rtol=0, atol=1e-12)


def test_length_weighted_with_equal_lengths_is_the_group_mean():
    r = t(1, 0, 0, 0.25, 3, 1, 5)
    same = outcome_advantages(r, IDS, baseline="length_weighted", scale="none", lengths=t(5, 5, 5, 5, 2, 2, 9))
    torch.testing.assert_close(same, outcome_advantages(r, IDS, baseline="group_mean", scale="none"))


def test_length_weighted_without_lengths_says_so():
    with pytest.raises(ValueError, match="needs the completions' lengths"):
        BASELINES["length_weighted"](t(1, 0), torch.tensor([0, 0]))


def test_passk_credits_only_the_best_of_each_group_by_hand():
    # Group 0: best 0.9 (row 1), second 0.5 -> 0.4 on row 1 only. Group 1: tie 1, 1 -> silent.
    # Group 2: a singleton -> 0.
    adv = outcome_advantages(t(0.5, 0.9, 0.1, 0.5, 1, 1, 1), IDS, baseline="passk", scale="none")
    torch.testing.assert_close(adv, t(0, 0.4, 0, 0, 0, 0, 0), rtol=0, atol=1e-12)


def test_passk_with_group_std():
    # Rewards 1, 0, 0, 0: best 1, second 0. Mean 0.25; squared deviations 0.5625 + 3 * 0.0625
    # = 0.75, / (n - 1) = 0.25, std 0.5; so A = (1 - 0) / 0.5 = 2 on the best row.
    adv = outcome_advantages(t(1, 0, 0, 0), torch.tensor([0, 0, 0, 0]), baseline="passk", scale="group_std", eps=0.0)
    torch.testing.assert_close(adv, t(2, 0, 0, 0), rtol=0, atol=1e-12)


def test_gpg_scale_by_hand():
    # Group 1 (2, 2) and the singleton group 2 carry no signal: M = 3 of B = 7 rows, so
    # alpha = 7 / 4. Group 0 (mean 0.625) centred: 0.375, -0.625, 0.375, -0.125.
    adv = outcome_advantages(t(1, 0, 1, 0.5, 2, 2, 3), IDS, baseline="group_mean", scale="gpg")
    torch.testing.assert_close(adv, 1.75 * t(0.375, -0.625, 0.375, -0.125, 0, 0, 0), rtol=0, atol=1e-12)


def test_gpg_on_a_batch_without_signal_is_zero_not_nan():
    adv = outcome_advantages(t(1, 1, 0, 0), torch.tensor([0, 0, 1, 1]), baseline="group_mean", scale="gpg")
    assert adv.tolist() == [0.0, 0.0, 0.0, 0.0]


def test_the_group_estimator_passes_the_completion_lengths():
    # Lengths from the mask: 1 and 3 tokens; b = (1 * 1 + 3 * 0) / 4 = 0.25.
    mask = torch.tensor([[1, 0, 0], [1, 1, 1]], dtype=torch.float64)
    spec = AdvantageSpec(baseline="length_weighted", scale="none")
    adv, _ = ADVANTAGES["group"](t(1, 0), None, mask, torch.tensor([0, 0]), None, spec)
    torch.testing.assert_close(adv, t(0.75, -0.25)[:, None] * mask, rtol=0, atol=1e-12)


def test_reinforce_pp_reads_lengths_too():
    mask = torch.tensor([[1, 0, 0], [1, 1, 1]], dtype=torch.float64)
    adv = reinforce_pp_advantages(t(1, 0), torch.tensor([0, 0]), mask, baseline="length_weighted")
    assert torch.isfinite(adv).all() and adv[0, 0] > 0 > adv[1, 0]


@pytest.mark.parametrize("axes", [("length_weighted", "none"), ("passk", "group_std"), ("group_mean", "gpg")],
                         ids=["opo", "passk", "gpg"])
def test_each_estimator_trains_a_step_of_the_recipe(tmp_path, axes):
    from pathlib import Path

    from rlvr.config import load_config
    from rlvr.orchestrate import train

    recipe = Path(__file__).resolve().parents[2] / "recipes" / "grpo.toml"
    config = load_config(recipe, [f"run.output_dir={tmp_path}", "run.name=e", "train.steps=2", "eval.size=0",
                                  "sampling.prompts_per_step=2", "sampling.group_size=4", "log.progress=none",
                                  f'algo.baseline="{axes[0]}"', f'algo.scale="{axes[1]}"'])
    rows = train(config).folder.read_metrics()
    assert [r["step"] for r in rows] == [1, 2] and all(r["train/grad_norm"] >= 0 for r in rows)
