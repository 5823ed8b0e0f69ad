"""RLPR probability reward against hand-computed mean token probabilities."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from rlvr.errors import ConfigError, RewardError
from rlvr.rewards.probability import ProbabilityReward, reasoning_prefix

REPO = Path(__file__).resolve().parents[2]


def prob_by_prefixes(model, tok, context: str, answer: str) -> float:
    """(1/|a|) sum_i p(a_i | context, a_<i), one forward per prefix (not one pass, as the code)."""
    ctx = tok(context, add_special_tokens=False)["input_ids"]
    ans = tok(answer, add_special_tokens=False)["input_ids"]
    probs = []
    with torch.no_grad():
        for i, token in enumerate(ans):
            logits = model(input_ids=torch.tensor([ctx + ans[:i]])).logits[0, -1]
            probs.append(float(torch.softmax(logits.double(), -1)[token]))
    return sum(probs) / len(probs)


def test_reasoning_prefix_cuts_at_the_last_marker():
    assert reasoning_prefix("think <answer>12</answer>") == "think <answer>"
    assert reasoning_prefix("a \\boxed{1} then <answer>2</answer> \\boxed{3}") == "a \\boxed{1} then <answer>2</answer> \\boxed{"
    assert reasoning_prefix("just 12") is None


def test_reward_is_the_mean_reference_token_probability(tiny_pair):
    model, tok = tiny_pair
    prompt, response, gold = "12+34=", "4+2 <answer>99</answer>", "46"
    plain = ProbabilityReward(model, tok, debias=False)(response, gold, prompt=prompt)
    r = prob_by_prefixes(model, tok, prompt + "4+2 <answer>", gold)
    assert plain.score == pytest.approx(r, abs=1e-6) and plain.flags == ()
    debiased = ProbabilityReward(model, tok)(response, gold, prompt=prompt)
    r_bare = prob_by_prefixes(model, tok, prompt, gold)
    assert debiased.score == pytest.approx(min(max(r - r_bare, 0.0), 1.0), abs=1e-6)
    assert f"{r_bare:.4f} without" in debiased.reason


def test_debiasing_clips_at_zero(tiny_pair):
    model, tok = tiny_pair
    # With an empty reasoning the two probabilities are the same, so r - r' = 0 exactly.
    assert ProbabilityReward(model, tok)("<answer>", "46", prompt="12+34=").score == 0.0


def test_uses_the_live_weights_and_restores_the_train_mode(tiny_model, tokenizer):
    reward = ProbabilityReward(tiny_model, tokenizer, debias=False)
    tiny_model.train()
    before = reward("<answer>", "46", prompt="12+34=").score
    assert tiny_model.training
    with torch.no_grad():
        tiny_model.lm_head.weight.mul_(3.0)  # a "training step": the reward must see it
    assert reward("<answer>", "46", prompt="12+34=").score != pytest.approx(before)


def test_bad_inputs(tiny_pair):
    reward = ProbabilityReward(*tiny_pair)
    assert reward("no marker at all", "46", prompt="1+1=").flags == ("unparsed",)
    assert reward("no marker at all", "46", prompt="1+1=").score == 0.0
    with pytest.raises(RewardError, match="non-empty reference"):
        reward("<answer>", "", prompt="1+1=")
    with pytest.raises(RewardError, match="needs the prompt"):
        reward("<answer>", "2")
    with pytest.raises(RewardError, match="over the model's context of 64"):
        reward("x" * 70 + "<answer>", "2", prompt="1+1=")


def test_build_needs_the_policy(tiny_pair):
    from rlvr.config import load_config
    from rlvr.orchestrate.scoring import build_reward_fn, score_groups
    from rlvr.types import Rollout, Sample

    section = load_config(None, ["reward.verifier=probability"]).reward
    with pytest.raises(ConfigError, match="no policy"):
        build_reward_fn(section)
    fn = build_reward_fn(section, policy=tiny_pair)
    groups, _ = score_groups(fn, [Sample("12+34=", "46")], [[Rollout((1,), (2,), (-0.1,), "x<answer>4", "stop")]], "fail")
    model, tok = tiny_pair
    want = max(prob_by_prefixes(model, tok, "12+34=x<answer>", "46") - prob_by_prefixes(model, tok, "12+34=", "46"), 0)
    assert groups[0][0].reward == pytest.approx(want, abs=1e-6)  # the prompt reached the reward


def test_a_training_run_scores_with_the_engine_copy_of_the_policy(tmp_path):
    from rlvr.config import load_config
    from rlvr.orchestrate import train
    from rlvr.orchestrate.components import build
    from rlvr.orchestrate.plan import plan_run

    overrides = [f"run.output_dir={tmp_path}", "reward.verifier=probability", "train.steps=1",
                 "sampling.prompts_per_step=2", "sampling.group_size=2", "eval.size=2", "eval.every=1", "log.progress=none"]
    config = load_config(REPO / "recipes" / "grpo.toml", overrides)
    parts = build(plan_run(config), REPO)
    assert parts.reward_fn.model is parts.engine.model and parts.reward_fn.tokenizer is parts.tokenizer
    [row] = train(config).folder.read_metrics()
    # The tiny arithmetic model writes bare numbers, with no answer marker: every sample is flagged.
    assert row["reward/flag_unparsed"] == 4 and row["reward/mean"] == 0.0
    assert row["eval/accuracy"] == 0.0  # held-out evaluation calls it with the prompt too
