"""Each step of the batch chain (rlvr.orchestrate.batch_steps) on a 2-3-row batch, with the
numbers written from the definitions, then build_batch end to end with fake models whose
log-probs are fixed: a 4-token vocabulary with probabilities (1/2, 1/4, 1/8, 1/8), so that
log p(0) = -0.693147, log p(1) = -1.386294, log p(2) = log p(3) = -2.079442.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from rlvr.config import load_config
from rlvr.orchestrate import batch_steps as steps
from rlvr.orchestrate.batch_builder import (ADVANTAGES, AdvantageSpec, BatchModels, BatchSpec, CovSpec, KLSpec,
                                            MismatchSpec, build_batch)
from rlvr.types import Rollout, Sample, Scored

REPO = Path(__file__).resolve().parents[2]
PROBS = (0.5, 0.25, 0.125, 0.125)
LOG = [math.log(p) for p in PROBS]


def t(x):
    return torch.tensor(x, dtype=torch.float32)


def close(got, want):
    torch.testing.assert_close(got, t(want) if not isinstance(want, torch.Tensor) else want)


class FixedLM(torch.nn.Module):
    """A causal LM whose next-token distribution is `probs` at every position."""

    def __init__(self, probs=PROBS):
        super().__init__()
        self.anchor = torch.nn.Parameter(torch.zeros(()))  # batch_logprobs reads the device from it
        self.logits = torch.log(torch.tensor(probs))

    def forward(self, input_ids, attention_mask, position_ids, use_cache, logits_to_keep):
        return SimpleNamespace(logits=self.logits.expand(input_ids.shape[0], logits_to_keep, len(self.logits)))


class FixedCritic:
    def __init__(self, values):
        self.v = t(values)

    def values(self, batch):
        return self.v.clone()


def scored(completion, logprobs, reward, finish="stop"):
    return Scored(Sample("q", "a"), Rollout((1,), tuple(completion), tuple(logprobs), "", finish), reward, "")


# --- collate --------------------------------------------------------------------------------

def test_collate_numbers_groups_and_keeps_the_outcomes():
    groups = [[scored([0, 1], [-1, -2], 1.0), scored([2], [-3], 0.0, "length")], [scored([3, 3, 3], [-1] * 3, 0.5)]]
    batch, out = steps.collate_groups(groups, pad_id=0)
    assert batch.group_ids.tolist() == [0, 0, 1]
    assert batch.completion_mask.tolist() == [[1, 1, 0], [1, 0, 0], [1, 1, 1]]
    assert batch.old_logp.tolist() == [[-1, -2, 0], [-3, 0, 0], [-1, -1, -1]]
    assert batch.adv.abs().sum() == 0
    assert out.rewards.tolist() == [1.0, 0.0, 0.5] and out.rewards.dtype == torch.float32
    assert out.lengths.tolist() == [2, 1, 3] and out.truncated.tolist() == [False, True, False]


def test_collate_keeps_an_episodes_observation_tokens_out_of_the_loss():
    """A multi-turn trajectory: policy token, two observation tokens, policy token."""
    episode = Rollout((1,), (5, 6, 7, 8), (-0.5, 0.0, 0.0, -0.25), "", "stop", loss_mask=(1, 0, 0, 1))
    batch, _ = steps.collate_groups([[Scored(Sample("q", "a"), episode, 1.0, ""), scored([2], [-1], 0.0)]], pad_id=0)
    assert batch.completion_mask.tolist() == [[1, 0, 0, 1], [1, 0, 0, 0]]


# --- shaped rewards (DAPO eq. 13) -------------------------------------------------------------

def test_overlong_shaping_hand_computed():
    # L_max = 8, L_cache = 2, so L_max - L_cache = 6: |y| = 5 -> 0; 7 -> (6 - 7) / 2 = -0.5;
    # 8 -> (6 - 8) / 2 = -1; 9 (past the budget) -> -1. Mean penalty -2.5 / 4 = -0.625.
    rewards, metrics = steps.shaped_rewards(t([1, 0, 1, 1]), torch.tensor([5, 7, 8, 9]), max_new_tokens=8,
                                            overlong_cache=2)
    close(rewards, [1, -0.5, 0, 0])
    assert metrics == {"reward/overlong_penalty_mean": pytest.approx(-0.625)}


def test_no_overlong_cache_leaves_the_rewards():
    rewards, metrics = steps.shaped_rewards(t([1, 0]), torch.tensor([9, 9]), max_new_tokens=8, overlong_cache=None)
    assert rewards.tolist() == [1, 0] and metrics == {}


# --- log-probs from a model -----------------------------------------------------------------

def test_completion_logprobs_of_a_fixed_model():
    batch, _ = steps.collate_groups([[scored([0, 1], [0, 0], 0), scored([2], [0], 0)]], pad_id=0)
    close(steps.completion_logprobs(FixedLM(), batch, 1.0), [[LOG[0], LOG[1]], [LOG[2], 0]])
    # Temperature 2: log softmax(log p / 2) = log p / 2 - log sum sqrt(p).
    z = math.log(sum(math.sqrt(p) for p in PROBS))
    close(steps.completion_logprobs(FixedLM(), batch, 2.0), [[LOG[0] / 2 - z, LOG[1] / 2 - z], [LOG[2] / 2 - z, 0]])


# --- mismatch weights -----------------------------------------------------------------------

def test_token_tis_weights_and_metrics():
    # rho = pi_old / mu = [3, 1 | 0.5, pad]; truncated at C = 2: [2, 1 | 0.5, 1 (pad)].
    engine = t([[0.0, -1.0], [0.0, 0.0]])
    trainer = engine + t([[math.log(3), 0.0], [math.log(0.5), 0.0]])
    mask = t([[1, 1], [1, 0]])
    weight, m = steps.mismatch_weights(trainer, engine, mask, MismatchSpec("token_tis", cap=2.0))
    close(weight, [[2, 1], [0.5, 1]])
    # k3(mu || pi_old) per token, d = log rho: e^d - 1 - d = [2 - log 3, 0, -0.5 + log 2], over 3 tokens.
    assert m["mismatch/kl"] == pytest.approx((2 - math.log(3) + math.log(2) - 0.5) / 3, rel=1e-6)
    assert m["mismatch/weight_mean"] == pytest.approx(3.5 / 3, rel=1e-6)
    assert m["mismatch/capped_frac"] == pytest.approx(1 / 3) and m["mismatch/masked_frac"] == 0


def test_token_mis_drops_the_tokens_outside_the_band():
    # rho = [3, 1 | 0.25]: with [low, cap] = [0.5, 2], 3 and 0.25 leave (weight 0), 1 stays.
    engine = t([[0.0, 0.0], [0.0, 0.0]])
    trainer = t([[math.log(3), 0.0], [math.log(0.25), 0.0]])
    weight, m = steps.mismatch_weights(trainer, engine, t([[1, 1], [1, 0]]), MismatchSpec("token_mis", 2.0, 0.5))
    close(weight, [[0, 1], [0, 1]])
    assert m["mismatch/masked_frac"] == pytest.approx(2 / 3)


# --- KL in the reward -----------------------------------------------------------------------

OLD = t([[-1.0, -2.0], [-0.5, 0.0]])
REF = t([[-1.5, -1.0], [-0.5, 0.0]])
MASK2 = t([[1, 1], [1, 0]])


@pytest.mark.parametrize("estimator, per_token", [
    ("k1", [[0.5, -1.0], [0, 0]]),  # log pi_old - log pi_ref
    ("k2", [[0.125, 0.5], [0, 0]]),  # (log pi_ref - log pi_old)^2 / 2
    ("k3", [[math.exp(-0.5) - 0.5, math.e - 2], [0, 0]]),  # e^d - 1 - d, d = log pi_ref - log pi_old
])
def test_kl_in_reward_is_coef_times_the_estimator(estimator, per_token):
    penalty, m = steps.kl_in_reward(OLD, REF, MASK2, KLSpec(estimator, coef=0.1, placement="reward"))
    close(penalty, 0.1 * t(per_token))
    assert m["reward/kl_penalty_mean"] == pytest.approx(0.1 * sum(per_token[0]) / 2, rel=1e-6)


def test_kl_in_the_loss_is_no_reward_penalty():
    assert steps.kl_in_reward(OLD, REF, MASK2, KLSpec("k3", coef=0.1, placement="loss")) == (None, {})


def test_kl_clamp_bounds_the_penalty():
    # k1 = [0.5, -1 | 0] clamped to [-0.2, 0.2].
    penalty, _ = steps.kl_in_reward(OLD, REF, MASK2, KLSpec("k1", coef=1.0, placement="reward", clamp=0.2))
    close(penalty, [[0.2, -0.2], [0, 0]])


# --- advantages -----------------------------------------------------------------------------

MASK3 = t([[1, 1], [1, 0], [1, 1]])
ONE_GROUP = torch.tensor([0, 0, 0])


def advantage(kind, rewards, mask, group_ids, penalty=None, values=None, **options):
    return ADVANTAGES[kind](t(rewards), penalty, mask, group_ids, values, AdvantageSpec(kind, **options))


def test_the_advantage_dict_names_three_estimators():
    assert set(ADVANTAGES) == {"group", "reinforce_pp", "gae"}


def test_group_mean_std_advantage():
    # r = [1, 0, 1]: mean 2/3, unbiased std sqrt((1/9 + 4/9 + 1/9) / 2) = sqrt(1/3) (GRPO §4.1.2).
    adv, targets = advantage("group", [1, 0, 1], MASK3, ONE_GROUP, eps=0.0)
    s = math.sqrt(1 / 3)
    close(adv, [[1 / 3 / s] * 2, [-2 / 3 / s, 0], [1 / 3 / s] * 2])
    assert targets is None


def test_rloo_advantage():
    # A_i = r_i - mean of the others: 1 - 1/2, 0 - 1, 1 - 1/2 (arXiv:2402.14740 §2.3).
    adv, _ = advantage("group", [1, 0, 1], MASK3, ONE_GROUP, baseline="rloo", scale="none")
    close(adv, [[0.5, 0.5], [-1, 0], [0.5, 0.5]])


def test_group_advantage_subtracts_the_summed_kl_penalty():
    # No baseline, no scale: A_i = r_i - sum_t penalty_t = [1 - 0.3, 0 - 0.3, 1 - 0.5].
    penalty = t([[0.1, 0.2], [0.3, 0.0], [0.25, 0.25]])
    adv, _ = advantage("group", [1, 0, 1], MASK3, ONE_GROUP, penalty, baseline="none", scale="none")
    close(adv, [[0.7, 0.7], [-0.3, 0], [0.5, 0.5]])


def test_reinforce_pp_whitens_the_returns_over_the_batch():
    # Token rewards [[0, 1], [0, -]], gamma 1: returns [1, 1 | 0]; mean 2/3, centred [1/3, 1/3, -2/3],
    # unbiased var (1/9 + 1/9 + 4/9) / 2 = 1/3 (arXiv:2501.03262 §3).
    adv, _ = advantage("reinforce_pp", [1, 0], MASK2, torch.tensor([0, 1]), baseline="none")
    s = math.sqrt(1 / 3 + 1e-8)
    close(adv, [[1 / 3 / s, 1 / 3 / s], [-2 / 3 / s, 0]])


def test_reinforce_pp_subtracts_the_kl_per_token():
    # Token rewards [[-0.1, 1 - 0.2], [-0.3, -]]: returns [0.7, 0.8 | -0.3]; mean 0.4,
    # centred [0.3, 0.4, -0.7], var (0.09 + 0.16 + 0.49) / 2 = 0.37.
    penalty = t([[0.1, 0.2], [0.3, 0.0]])
    adv, _ = advantage("reinforce_pp", [1, 0], MASK2, torch.tensor([0, 1]), penalty, baseline="none")
    s = math.sqrt(0.37 + 1e-8)
    close(adv, [[0.3 / s, 0.4 / s], [-0.7 / s, 0]])


VALUES = t([[0.5, 0.8], [0.2, 0.0]])


def test_gae_on_two_tokens():
    # Row 0, r = 1 on token 1: delta_1 = 1 - 0.8 = 0.2, delta_0 = 0.8 - 0.5 = 0.3; lam 0.5:
    # A = [0.3 + 0.5 * 0.2, 0.2] = [0.4, 0.2]; lam_critic 1: [0.5, 0.2], targets A + V = [1, 1].
    # Row 1, r = 0 on token 0: delta_0 = -0.2 = A; target 0. Then A = [0.4, 0.2, -0.2] whitened:
    # mean 2/15, centred [4/15, 1/15, -5/15], var (16 + 1 + 25) / 225 / 2 = 0.093333.
    adv, targets = advantage("gae", [1, 0], MASK2, torch.tensor([0, 1]), values=VALUES, lam=0.5, lam_critic=1.0)
    s = math.sqrt(42 / 450 + 1e-8)
    close(adv, [[4 / 15 / s, 1 / 15 / s], [-5 / 15 / s, 0]])
    close(targets, [[1, 1], [0, 0]])


def test_gae_subtracts_the_kl_per_token():
    # Token rewards [[-0.1, 0.9], [-0.1, -]]: row 0 lam_critic 1: A = [0.2 + 0.1, 0.9 - 0.8] = [0.3, 0.1],
    # targets [0.8, 0.9]; row 1: A = -0.1 - 0.2 = -0.3, target -0.1.
    penalty = t([[0.1, 0.1], [0.1, 0.0]])
    _, targets = advantage("gae", [1, 0], MASK2, torch.tensor([0, 1]), penalty, VALUES, lam=0.5, lam_critic=1.0)
    close(targets, [[0.8, 0.9], [-0.1, 0]])


def test_gae_length_adaptive_lambda():
    # VAPO: lam = 1 - 1/(alpha l); alpha = 1, l = 2 -> 0.5 (row 1's l = 1 -> 0, one token: no effect),
    # so spec.lam = 0.9 is not read and the advantages are those of lam = 0.5.
    adaptive, _ = advantage("gae", [1, 0], MASK2, torch.tensor([0, 1]), values=VALUES, lam=0.9, lam_alpha=1.0)
    fixed, _ = advantage("gae", [1, 0], MASK2, torch.tensor([0, 1]), values=VALUES, lam=0.5)
    close(adaptive, fixed)


def test_gae_without_a_critic_says_so():
    with pytest.raises(ValueError, match="needs a critic"):
        advantage("gae", [1, 0], MASK2, torch.tensor([0, 1]))


# --- masks, imitation weights, covariance ---------------------------------------------------

def test_truncation_mask_zeroes_the_truncated_rows():
    mask, m = steps.mask_truncated_rows(MASK3, torch.tensor([False, True, False]))
    close(mask, [[1, 1], [0, 0], [1, 1]])
    assert m == {"response/masked_truncated": 1.0}


def test_positive_lm_weights():
    # Rows 0 and 2 have reward 1: 2 + 2 tokens, each weighted 1/4 (VAPO eq. 9); none when coef = 0.
    close(steps.imitation_weights(MASK3, t([1, 0.5, 1]), 0.1), [[0.25, 0.25], [0, 0], [0.25, 0.25]])
    assert steps.imitation_weights(MASK3, t([1, 0.5, 1]), 0.0) is None


ADV = t([[1.0, 1.0], [-1.0, 0.0]])
LOGP = t([[-1.0, -3.0], [-2.0, 0.0]])


def test_kl_cov_selects_the_largest_covariance():
    # Over the 3 tokens: mean A = 1/3, mean logp = -2; cov = (A - 1/3)(logp + 2) = [2/3, -2/3 | 0].
    # ratio 0.34 of 3 tokens -> 1 token: the first.
    select = steps.covariance_selection(ADV, LOGP, MASK2, CovSpec("kl_cov", ratio=0.34))
    close(select, [[1, 0], [0, 0]])


def test_clip_cov_selects_within_the_band():
    # Only cov = 2/3 is inside (0.5, 1).
    select = steps.covariance_selection(ADV, LOGP, MASK2, CovSpec("clip_cov", ratio=0.34, low=0.5, high=1.0))
    close(select, [[1, 0], [0, 0]])
    assert steps.covariance_selection(ADV, LOGP, MASK2, CovSpec("none")) is None


# --- the spec -------------------------------------------------------------------------------

def test_spec_from_a_recipe():
    spec = BatchSpec.from_config(load_config(REPO / "recipes" / "vapo.toml"))
    assert spec.advantage == AdvantageSpec("gae", baseline="none", scale="none", eps=1e-4, gamma=1.0, lam=0.95,
                                           lam_critic=1.0, lam_alpha=0.05)
    assert spec.positive_lm_coef == 0.1 and spec.kl.estimator == "none" and spec.max_new_tokens == 8


@pytest.mark.parametrize("make, field", [(lambda: AdvantageSpec("grpo"), "algo.advantage"),
                                         (lambda: KLSpec("k4"), "algo.kl"),
                                         (lambda: MismatchSpec("tis"), "algo.mismatch"),
                                         (lambda: CovSpec("cov"), "algo.entropy_control")])
def test_an_unknown_kind_is_refused_by_name(make, field):
    with pytest.raises(ValueError, match=field):
        make()


# --- build_batch end to end, with fixed models ---------------------------------------------

def two_rows(finish=("stop", "stop"), rewards=(1.0, 0.0)):
    """One group: completion (0, 1) with engine log-probs (-0.5, -1.0), completion (2,) with (-3.0,)."""
    return [[scored([0, 1], [-0.5, -1.0], rewards[0], finish[0]), scored([2], [-3.0], rewards[1], finish[1])]]


def raw(**changes):
    """The spec with no baseline and no scale, so that the advantage shows the shaped reward."""
    return BatchSpec(advantage=AdvantageSpec("group", baseline="none", scale="none"), **changes)


def models(reference=None, critic=None):
    return BatchModels(policy=FixedLM(), reference=reference, critic=critic, pad_id=0)


def test_build_batch_subtracts_the_kl_from_the_reward():
    # k1 per token = log pi_old - log pi_ref, times 0.5, summed over the row:
    # row 0: 0.5 (-0.5 + 0.693147 - 1 + 1.386294) = 0.289721 -> A = 1 - 0.289721;
    # row 1: 0.5 (-3 + 2.079442) = -0.460279 -> A = 0 + 0.460279. (A flipped sign gives 1.29, -0.46.)
    spec = raw(kl=KLSpec("k1", coef=0.5, placement="reward"))
    built = build_batch(two_rows(), spec, models(reference=FixedLM()))
    p0, p1 = 0.5 * (-0.5 - LOG[0] - 1.0 - LOG[1]), 0.5 * (-3.0 - LOG[2])
    close(built.batch.adv, [[1 - p0, 1 - p0], [-p1, 0]])
    close(built.batch.ref_logp, [[LOG[0], LOG[1]], [LOG[2], 0]])
    assert built.metrics["reward/kl_penalty_mean"] == pytest.approx((p0 + p1) / 2, rel=1e-6)
    assert built.critic_targets is None


def test_build_batch_kl_in_the_loss_leaves_the_reward():
    built = build_batch(two_rows(), raw(kl=KLSpec("k1", coef=0.5, placement="loss")), models(reference=FixedLM()))
    close(built.batch.adv, [[1, 1], [0, 0]])
    assert built.batch.ref_logp is not None and "reward/kl_penalty_mean" not in built.metrics


def test_build_batch_drops_truncated_rows_from_the_loss():
    built = build_batch(two_rows(finish=("stop", "length")), raw(mask_truncated=True), models())
    assert built.batch.completion_mask.tolist() == [[1, 1], [0, 0]]
    assert built.metrics["response/masked_truncated"] == 1.0


def test_build_batch_masks_the_advantage():
    # Row 1 is truncated and has reward 1: its advantage was computed before the truncation mask,
    # so only adv * mask takes it back to 0.
    built = build_batch(two_rows(finish=("stop", "length"), rewards=(0.0, 1.0)), raw(mask_truncated=True), models())
    assert built.batch.adv.tolist() == [[0, 0], [0, 0]]


def test_build_batch_imitates_correct_rows_with_their_verifier_reward():
    # DAPO shaping (L_max 2, L_cache 1): row 0 (2 tokens) gets (1 - 2) / 1 = -1, reward 1 -> 0, yet it
    # is still a correct sample for VAPO's LM loss: both its tokens weigh 1/2.
    spec = raw(max_new_tokens=2, overlong_cache=1, positive_lm_coef=0.1)
    built = build_batch(two_rows(rewards=(1.0, 0.0)), spec, models())
    close(built.batch.lm_weight, [[0.5, 0.5], [0, 0]])
    close(built.batch.adv, [[0, 0], [0, 0]])
    assert built.metrics["reward/overlong_penalty_mean"] == pytest.approx(-0.5)


def test_build_batch_mismatch_makes_the_trainer_pi_old():
    # pi_old = the policy's log-probs [log 1/2, log 1/4 | log 1/8]; rho = e^(pi_old - mu):
    # [e^(-0.193147), e^(-0.386294) | e^(0.920558) = 2.51 -> cap 2].
    built = build_batch(two_rows(), raw(mismatch=MismatchSpec("token_tis", cap=2.0)), models())
    close(built.batch.old_logp, [[LOG[0], LOG[1]], [LOG[2], 0]])
    close(built.batch.is_weight, [[math.exp(LOG[0] + 0.5), math.exp(LOG[1] + 1.0)], [2.0, 1.0]])
    assert built.metrics["mismatch/capped_frac"] == pytest.approx(1 / 3)


def test_build_batch_gae_hands_the_critic_its_targets():
    # Rewards [1, 0], V = [[0.5, 0.8], [0.2, 0]], lam 0.5, lam_critic 1: as test_gae_on_two_tokens.
    spec = BatchSpec(advantage=AdvantageSpec("gae", baseline="none", scale="none", lam=0.5, lam_critic=1.0))
    built = build_batch(two_rows(), spec, models(critic=FixedCritic([[0.5, 0.8], [0.2, 0.0]])))
    values, targets = built.critic_targets
    close(values, VALUES)
    close(targets, [[1, 1], [0, 0]])
    s = math.sqrt(42 / 450 + 1e-8)
    close(built.batch.adv, [[4 / 15 / s, 1 / 15 / s], [-5 / 15 / s, 0]])


def test_build_batch_selects_covariance_tokens_after_the_truncation_mask():
    # kl_cov with ratio 1 selects every token left in the loss: the 2 of row 0, none of truncated row 1.
    spec = raw(mask_truncated=True, cov=CovSpec("kl_cov", ratio=1.0))
    built = build_batch(two_rows(finish=("stop", "length")), spec, models())
    assert built.batch.cov_select.tolist() == [[1, 1], [0, 0]]


def replayed_rows():
    """two_rows with the engine's kept-set sizes: row 0 drew from the top 2 then the top 3, row 1
    from the top 1 (its token, 2, is ranked 3rd by the policy: k - 1 = 0 first ones and it)."""
    (a, b), = two_rows()
    return [[dataclasses.replace(a, rollout=dataclasses.replace(a.rollout, support=(2, 3))),
             dataclasses.replace(b, rollout=dataclasses.replace(b.rollout, support=(1,)))]]


def test_build_batch_replay_renormalises_pi_old_but_not_the_reference():
    # pi_old over the kept sets: log(0.5 / 0.75), log(0.25 / 0.875) | log(0.125 / 0.125) = 0;
    # the reference keeps its full-vocabulary log-probs.
    spec = raw(sampling_mask="replay", mismatch=MismatchSpec("token_tis", cap=2.0),
               kl=KLSpec("k1", coef=0.5, placement="reward"))
    built = build_batch(replayed_rows(), spec, models(reference=FixedLM()))
    close(built.batch.old_logp, [[math.log(0.5 / 0.75), math.log(0.25 / 0.875)], [0.0, 0]])
    close(built.batch.ref_logp, [[LOG[0], LOG[1]], [LOG[2], 0]])
    assert built.metrics["sampling/kept_set_mean"] == pytest.approx(2.0)


def test_build_batch_replay_without_kept_sets_is_refused():
    with pytest.raises(ValueError, match="no rollout of the batch recorded its kept sets"):
        build_batch(two_rows(), raw(sampling_mask="replay"), models())
