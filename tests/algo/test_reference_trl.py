"""Differential tests against TRL's GRPOTrainer loss (`GRPOTrainer._compute_loss`), called
directly on the same float64 tensors: the loss and d loss / d logp must agree within 1e-6.

TRL is a test-only dependency (the `dev` extra). The trainer object is built without its
__init__ (no model, no dataset): only the attributes `_compute_loss` reads are set, and the
model's forward is replaced by the log-probs under test.

Mapping (rlvr ← TRL):
    aggregation token_mean               ← loss_type "bnpo" and "dapo"
    aggregation seq_mean_token_mean      ← loss_type "grpo"    (equal when no row is empty)
    aggregation seq_mean_token_sum_norm  ← loss_type "dr_grpo" with C = max_completion_length
                                           (equal when no row is empty)
    ratio_level sequence                 ← importance_sampling_level "sequence" (GSPO, no stop-grad)
    surrogate dual_clip (clip_c = delta) ← delta (two-sided clipping), when delta >= 1 + eps_high
    surrogate cispo                      ← loss_type "cispo": TRL's epsilon_high is the absolute
                                           cap of the weight (1 + our eps_high) and it has no lower
                                           bound (our eps_low >= 1); TRL multiplies log pi, we
                                           log(pi / pi_old): losses differ by sg(w) A log pi_old
    kl k3 in the loss, kl_coef = beta    ← beta
    ratio_level sequence + ppo_clip + seq_mean_token_sum_norm with C = 1
                                         ← loss_type "luspo" (GSPO's ratio, each sequence's loss
                                           times its length, mean over rows)
    surrogate vespo (k, lambda)          ← loss_type "vespo" with token_mean: TRL multiplies
                                           log pi, we log r (offset sg(phi) A log pi_old)
Documented differences: a fully masked row counts in TRL's "grpo" / "dr_grpo" denominators
(the batch size B) and not in ours (non-empty rows); tested below as an exact ratio.
"""

from __future__ import annotations

from collections import defaultdict
from types import SimpleNamespace

import pytest
import torch

from rlvr.algo import Objective
from rlvr.types import Batch

grpo_trainer = pytest.importorskip(
    "trl.trainer.grpo_trainer", reason="TRL is not installed (test-only dependency: pip install -e '.[dev]')")

EPS_LOW, EPS_HIGH, MAX_LEN = 0.2, 0.28, 6


class _OneProcess:
    num_processes = 1
    sync_gradients = True

    def gather(self, x):
        return x

    gather_for_metrics = gather

    def reduce(self, x, reduction="sum"):
        return x


def trl_loss_and_grad(logp, old_logp, adv, mask, ref_logp=None, *, loss_type, level="token",
                      eps_high=EPS_HIGH, delta=None, beta=0.0, off_policy=None, vespo=None):
    t = grpo_trainer.GRPOTrainer.__new__(grpo_trainer.GRPOTrainer)
    x = logp.clone().requires_grad_()
    t.__dict__.update(
        top_entropy_quantile=1.0, off_policy_mask_threshold=off_policy, importance_sampling_level=level,
        beta=beta, loss_type=loss_type, epsilon_low=EPS_LOW, epsilon_high=eps_high, use_vllm=False,
        args=SimpleNamespace(delta=delta, use_bias_correction_kl=False, steps_per_generation=1,
                             **{f"vespo_{k}": v for k, v in (vespo or {}).items()}),
        current_gradient_accumulation_steps=1, max_completion_length=MAX_LEN, accelerator=_OneProcess(),
        _entropy_bonus_enabled=False, aux_loss_enabled=False, model=SimpleNamespace(training=True),
        _metrics={"train": defaultdict(list), "eval": defaultdict(list)},
        _get_per_token_logps_and_entropies=lambda *a, **k: (x, torch.zeros_like(x), None),
    )
    b, n = mask.shape
    inputs = {"prompt_ids": torch.zeros(b, 1, dtype=torch.long), "prompt_mask": torch.ones(b, 1, dtype=torch.long),
              "completion_ids": torch.zeros(b, n, dtype=torch.long), "completion_mask": mask,
              "advantages": adv, "old_per_token_logps": old_logp, "ref_per_token_logps": ref_logp,
              "num_items_in_batch": mask.sum()}
    loss = t._compute_loss(None, inputs)
    loss.backward()
    return loss.detach(), x.grad


def rlvr_loss_and_grad(objective: Objective, logp, old_logp, adv, mask, ref_logp=None):
    b, n = mask.shape
    batch = Batch(input_ids=torch.zeros(b, 1 + n, dtype=torch.long),
                  attention_mask=torch.ones(b, 1 + n, dtype=torch.long),
                  completion_mask=mask, old_logp=old_logp, adv=adv[:, None] * mask,
                  group_ids=torch.arange(b) // 2, ref_logp=ref_logp)
    x = logp.clone().requires_grad_()
    loss, _ = objective.loss(x, batch, objective.weights(mask, batch.group_ids))
    loss.backward()
    return loss.detach(), x.grad


def inputs(seed: int, empty_row: bool = False):
    """Ragged float64 batch, ratios e^N(0, 0.4) so tokens clip on both sides; adv has a 0 (a
    zero-variance group) and both signs."""
    gen = torch.Generator().manual_seed(seed)
    b = 6
    lengths = torch.tensor([6, 3, 1, 5, 2, 4])
    if empty_row:
        lengths[2] = 0
    mask = (torch.arange(MAX_LEN) < lengths[:, None]).double()
    old_logp = -2 * torch.rand(b, MAX_LEN, generator=gen, dtype=torch.float64) * mask
    logp = (old_logp + 0.4 * torch.randn(b, MAX_LEN, generator=gen, dtype=torch.float64)) * mask
    ref_logp = (old_logp + 0.3 * torch.randn(b, MAX_LEN, generator=gen, dtype=torch.float64)) * mask
    adv = torch.tensor([1.2, -0.7, 0.0, -1.5, 0.9, 0.3], dtype=torch.float64)
    return logp, old_logp, adv, mask, ref_logp


def objective(aggregation, **kw) -> Objective:
    args = kw.pop("surrogate_args", {"eps_low": EPS_LOW, "eps_high": EPS_HIGH})
    return Objective(aggregation=aggregation, aggregation_constant=float(MAX_LEN), surrogate_args=args, **kw)


def assert_agree(ours, theirs, offset=0.0):
    torch.testing.assert_close(ours[0] + offset, theirs[0], rtol=0, atol=1e-6)
    torch.testing.assert_close(ours[1], theirs[1], rtol=0, atol=1e-6)


CASES = {
    # name: (TRL kwargs, rlvr Objective kwargs)
    "grpo": (dict(loss_type="grpo"), dict(aggregation="seq_mean_token_mean")),
    "bnpo": (dict(loss_type="bnpo"), dict(aggregation="token_mean")),
    "dapo": (dict(loss_type="dapo"), dict(aggregation="token_mean")),
    "dr_grpo": (dict(loss_type="dr_grpo"), dict(aggregation="seq_mean_token_sum_norm")),
    "gspo_sequence": (dict(loss_type="grpo", level="sequence", eps_high=0.04),
                      dict(aggregation="seq_mean_token_mean", ratio_level="sequence",
                           surrogate_args={"eps_low": EPS_LOW, "eps_high": 0.04})),
    "gspo_sequence_dapo_norm": (dict(loss_type="dapo", level="sequence"),
                                dict(aggregation="token_mean", ratio_level="sequence")),
    "delta_is_dual_clip": (dict(loss_type="bnpo", delta=1.4),
                           dict(aggregation="token_mean", surrogate="dual_clip",
                                surrogate_args={"eps_low": EPS_LOW, "eps_high": EPS_HIGH, "clip_c": 1.4})),
    "grpo_k3_beta": (dict(loss_type="grpo", beta=0.04), dict(aggregation="seq_mean_token_mean", kl="k3", kl_coef=0.04)),
    # DeepSeek-V3.2's off-policy sequence mask at delta = 0.1 (seed 2 drops one of two negatives)
    "off_policy_mask": (dict(loss_type="grpo", beta=0.04, off_policy=0.1),
                        dict(aggregation="seq_mean_token_mean", kl="k3", kl_coef=0.04, off_policy_delta=0.1)),
}


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_matches_trl(case, seed):
    trl_kw, ours_kw = case
    logp, old_logp, adv, mask, ref_logp = inputs(seed)
    theirs = trl_loss_and_grad(logp, old_logp, adv, mask, ref_logp, **trl_kw)
    ours = rlvr_loss_and_grad(objective(**ours_kw), logp, old_logp, adv, mask, ref_logp)
    assert theirs[1].abs().sum() > 0
    assert_agree(ours, theirs)


def test_off_policy_case_drops_some_but_not_all_negatives():
    from rlvr.algo.off_policy import off_policy_sequence_mask

    # Seed 2: the negative rows 1 and 3 have mean log(pi_old / pi) 0.093 and 0.192: at delta 0.1
    # row 3 is dropped and row 1 kept, so the TRL case above exercises both branches.
    logp, old_logp, adv, mask, _ = inputs(2)
    keep = off_policy_sequence_mask(logp, old_logp, adv[:, None] * mask, mask, 0.1)
    assert keep[:, 0].tolist() == [1.0, 1.0, 1.0, 0.0, 1.0, 1.0]


@pytest.mark.parametrize("delta", [-0.25, -0.155])
@pytest.mark.parametrize("seed", [0, 2])
def test_negative_off_policy_thresholds_through_the_recipe_key_match_trl(delta, seed):
    # TRL takes any threshold; `algo.off_policy_delta` must load what the function takes.
    from rlvr.config import load_config
    from rlvr.orchestrate.plan import objective_args

    loaded = objective_args(load_config(None, [f"algo.off_policy_delta={delta}"]))["off_policy_delta"]
    assert loaded == delta
    logp, old_logp, adv, mask, ref_logp = inputs(seed)
    theirs = trl_loss_and_grad(logp, old_logp, adv, mask, ref_logp, loss_type="grpo", off_policy=delta)
    ours = rlvr_loss_and_grad(objective("seq_mean_token_mean", off_policy_delta=loaded), logp, old_logp, adv,
                              mask, ref_logp)
    assert_agree(ours, theirs)


def test_inputs_clip_on_both_sides():
    logp, old_logp, _, mask, _ = inputs(0)
    ratio = (logp - old_logp).exp()[mask.bool()]
    assert (ratio < 1 - EPS_LOW).any() and (ratio > 1 + EPS_HIGH).any() and (ratio > 1.4).any()


@pytest.mark.parametrize("seed", [0, 1])
def test_cispo_matches_trl_up_to_the_constant_log_pi_old_term(seed):
    # TRL: -sg(min(r, cap)) A log pi, token-mean; rlvr: -sg(clip(r, 1 - eps_low, 1 + eps_high)) A log r
    # with eps_low = 1 (no lower bound) and 1 + eps_high = cap. Same gradient; the losses differ by
    # the no-gradient term -mean_tokens(sg(w) A log pi_old), computed here.
    logp, old_logp, adv, mask, _ = inputs(seed)
    cap = 1.28
    theirs = trl_loss_and_grad(logp, old_logp, adv, mask, loss_type="cispo", eps_high=cap)
    obj = objective("token_mean", surrogate="cispo", surrogate_args={"eps_low": 1.0, "eps_high": cap - 1})
    ours = rlvr_loss_and_grad(obj, logp, old_logp, adv, mask)
    weight = (logp - old_logp).exp().clamp(max=cap)
    offset = -(weight * adv[:, None] * old_logp * mask).sum() / mask.sum()
    assert_agree(ours, theirs, offset)


@pytest.mark.parametrize("loss_type, aggregation", [("grpo", "seq_mean_token_mean"),
                                                    ("dr_grpo", "seq_mean_token_sum_norm")])
def test_empty_row_counts_in_trl_denominator_not_ours(loss_type, aggregation):
    # Documented difference: TRL divides by B = 6 rows, rlvr by the 5 non-empty ones, so
    # TRL = rlvr * 5/6 exactly (loss and gradient); dapo / bnpo agree (token counts).
    logp, old_logp, adv, mask, ref_logp = inputs(0, empty_row=True)
    theirs = trl_loss_and_grad(logp, old_logp, adv, mask, loss_type=loss_type)
    ours = rlvr_loss_and_grad(objective(aggregation), logp, old_logp, adv, mask)
    torch.testing.assert_close(ours[0] * 5 / 6, theirs[0], rtol=0, atol=1e-6)
    torch.testing.assert_close(ours[1] * 5 / 6, theirs[1], rtol=0, atol=1e-6)
    for tok_loss in ("dapo", "bnpo"):
        assert_agree(rlvr_loss_and_grad(objective("token_mean"), logp, old_logp, adv, mask),
                     trl_loss_and_grad(logp, old_logp, adv, mask, loss_type=tok_loss))


def trl_rloo_loss_and_grad(logp, old_logp, adv, mask):
    """TRL's `RLOOTrainer._compute_loss` on the same tensors: one ratio per sequence,
    exp(sum_t logp - sum_t old_logp), clipped, averaged over rows."""
    from trl.trainer import rloo_trainer

    t = rloo_trainer.RLOOTrainer.__new__(rloo_trainer.RLOOTrainer)
    x = logp.clone().requires_grad_()
    t.__dict__.update(
        epsilon_low=EPS_LOW, epsilon_high=EPS_HIGH, aux_loss_enabled=False, accelerator=_OneProcess(),
        model=SimpleNamespace(training=True), _metrics={"train": defaultdict(list), "eval": defaultdict(list)},
        _get_per_token_logps_and_entropies=lambda *a, **k: (x, torch.zeros_like(x), None),
    )
    b, n = mask.shape
    inputs_ = {"prompt_ids": torch.zeros(b, 1, dtype=torch.long), "prompt_mask": torch.ones(b, 1, dtype=torch.long),
               "completion_ids": torch.zeros(b, n, dtype=torch.long), "completion_mask": mask,
               "advantages": adv, "old_logps": (old_logp * mask).sum(1)}
    loss = t._compute_loss(None, inputs_)
    loss.backward()
    return loss.detach(), x.grad


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rloo_recipe_objective_matches_trl_rloo(seed):
    # recipes/rloo.toml: ratio_level sequence_sum, aggregation seq_mean_token_mean (no empty
    # row: TRL's mean over rows counts an empty one, ours does not, as for "grpo" above).
    # Ratios far enough off-policy that some sequences clip on each side.
    logp, old_logp, adv, mask, _ = inputs(seed)
    seq_ratio = ((logp - old_logp) * mask).sum(1).exp()
    inside = (seq_ratio > 1 - EPS_LOW) & (seq_ratio < 1 + EPS_HIGH)
    assert inside.any() and not inside.all()
    theirs = trl_rloo_loss_and_grad(logp, old_logp, adv, mask)
    ours = rlvr_loss_and_grad(objective("seq_mean_token_mean", ratio_level="sequence_sum"),
                              logp, old_logp, adv, mask)
    assert theirs[1].abs().sum() > 0
    assert_agree(ours, theirs)


def test_rloo_recipe_file_uses_the_trl_objective():
    from rlvr.config.load import load_config

    algo = load_config("recipes/rloo.toml").algo
    assert (algo.ratio_level, algo.aggregation, algo.baseline) == ("sequence_sum", "seq_mean_token_mean", "rloo")


def test_luspo_is_gspo_with_the_token_sum_over_c_1():
    # LUSPO (arXiv:2602.05261): GSPO's sequence ratio, the loss of each sequence scaled by its
    # length: sum_t l_t per row, mean over rows = seq_mean_token_sum_norm with C = 1.
    for seed in (0, 1, 2):
        logp, old_logp, adv, mask, _ = inputs(seed)
        theirs = trl_loss_and_grad(logp, old_logp, adv, mask, loss_type="luspo", level="sequence", eps_high=0.04)
        obj = Objective(ratio_level="sequence", aggregation="seq_mean_token_sum_norm", aggregation_constant=1.0,
                        surrogate_args={"eps_low": EPS_LOW, "eps_high": 0.04})
        assert_agree(rlvr_loss_and_grad(obj, logp, old_logp, adv, mask), theirs)


VESPO = {"k_pos": 2.0, "lambda_pos": 3.0, "k_neg": 3.0, "lambda_neg": 2.0}  # TRL 1.16's defaults


@pytest.mark.parametrize("seed", [0, 1])
def test_vespo_matches_trl_up_to_the_constant_log_pi_old_term(seed):
    # phi(w_i) = e^lam w^k e^(-lam w), w_i = exp(sum_t log r_it); TRL: -phi A log pi, token-mean;
    # rlvr: -phi A log r. The losses differ by -mean_tokens(phi A log pi_old), computed here.
    logp, old_logp, adv, mask, _ = inputs(seed)
    theirs = trl_loss_and_grad(logp, old_logp, adv, mask, loss_type="vespo", vespo=VESPO)
    ours = rlvr_loss_and_grad(objective("token_mean", surrogate="vespo", surrogate_args=VESPO),
                              logp, old_logp, adv, mask)
    w = ((logp - old_logp) * mask).sum(-1, keepdim=True).exp()
    k = torch.where(adv[:, None] >= 0, 2.0, 3.0).double()
    lam = torch.where(adv[:, None] >= 0, 3.0, 2.0).double()
    phi = torch.exp(lam + k * w.log() - lam * w)
    assert ((phi - 1).abs() > 0.2).any()  # the weight acts: phi is far from its on-policy 1 somewhere
    offset = -(phi * adv[:, None] * old_logp * mask).sum() / mask.sum()
    assert_agree(ours, theirs, offset)
