"""Micro-batching gives the full-batch gradient; a step moves the weights; checkpoints are whole."""

from __future__ import annotations

import copy
import dataclasses

import pytest
import torch

from rlvr.algo import AGGREGATIONS, Objective, outcome_advantages
from rlvr.engines import HFEngine, SamplingParams
from rlvr.errors import NumericalError
from rlvr.train import OptimConfig, Trainer
from rlvr.train.batching import collate
from rlvr.train.logprobs import batch_logprobs
from rlvr.train.checkpoint import list_checkpoints, load_state, save_checkpoint
from rlvr.models.finite import all_finite, first_nonfinite


def rollout_batch(model, tokenizer, seed=0):
    engine = HFEngine(copy.deepcopy(model), tokenizer, seed=seed)
    groups = engine.generate(["12+34=", "5+77=", "90+9="], 4, SamplingParams(max_new_tokens=5))
    flat = [r for g in groups for r in g]
    group_ids = torch.arange(3).repeat_interleave(4)
    rewards = torch.tensor([float(i % 3 == 0) for i in range(12)])
    adv = outcome_advantages(rewards, group_ids, baseline="group_mean", scale="group_std")
    batch = collate(flat, adv, group_ids, tokenizer.pad_token_id)
    # Move off-policy a little so that clipping is active on some tokens.
    shift = 0.3 * torch.randn_like(batch.old_logp).sign() * batch.completion_mask
    return dataclasses.replace(batch, old_logp=batch.old_logp + shift)


def grads(trainer: Trainer):
    return torch.cat([p.grad.flatten() for p in trainer.model.parameters() if p.grad is not None])


def assert_micro_batches_exact(model, batch, objective, micro: int, keys: tuple[str, ...]) -> dict:
    """Gradients and the metrics `keys` of micro-batches of `micro` rows equal the full batch's;
    returns the full batch's metrics."""
    full = Trainer(model, objective, OptimConfig(), micro_batch_size=len(batch.input_ids))
    m_full = full.accumulate_gradients(batch)
    g_full = grads(full)
    split = Trainer(model, objective, OptimConfig(), micro_batch_size=micro)
    m_split = split.accumulate_gradients(batch)
    # float32 sums: the tolerance scales with the total aggregation weight (1 for the normalised
    # modes; the token count for token_sum, which is not normalised)
    scale = max(1.0, float(objective.weights(batch.completion_mask, batch.group_ids).sum()))
    torch.testing.assert_close(grads(split), g_full, atol=1e-6 * scale, rtol=1e-4)
    for key in keys:
        assert m_split[key] == pytest.approx(m_full[key], abs=1e-6 * scale), key
    return m_full


@pytest.mark.parametrize("aggregation", sorted(AGGREGATIONS))
def test_micro_batches_reproduce_the_full_batch_gradient(tiny_model, tokenizer, aggregation):
    objective = Objective(aggregation=aggregation, aggregation_constant=5.0)
    m_full = assert_micro_batches_exact(tiny_model, rollout_batch(tiny_model, tokenizer), objective, 1,
                                        ("loss/policy",))
    assert m_full["policy/clip_low_frac"] + m_full["policy/clip_high_frac"] > 0


VARIANTS = {
    "gspo": Objective(ratio_level="sequence", surrogate_args={"eps_low": 3e-4, "eps_high": 4e-4}),
    "cispo_entropy_bonus": Objective(surrogate="cispo", surrogate_args={"eps_low": 1.0, "eps_high": 0.28},
                                     aggregation="token_mean", entropy_coef=0.01),
    "dual_clip_gspo_token": Objective(ratio_level="sequence_token", surrogate="dual_clip",
                                      surrogate_args={"eps_low": 0.2, "eps_high": 0.28, "clip_c": 1.2},
                                      aggregation="prompt_mean", entropy_coef=0.001),
}


@pytest.mark.parametrize("objective", VARIANTS.values(), ids=VARIANTS.keys())
def test_micro_batches_reproduce_the_full_batch_gradient_for_each_axis(tiny_model, tokenizer, objective):
    # The entropy bonus goes through the model's logits, so this also checks its gradient path.
    assert_micro_batches_exact(tiny_model, rollout_batch(tiny_model, tokenizer), objective, 5,
                               ("loss/policy", "policy/entropy", "policy/ratio_mean"))


def test_positive_lm_loss_splits_exactly_over_micro_batches(tiny_model, tokenizer):
    from rlvr.algo.imitation import positive_lm_weights

    batch = rollout_batch(tiny_model, tokenizer)
    rewards = torch.tensor([float(i % 3 == 0) for i in range(12)])
    batch = dataclasses.replace(batch, lm_weight=positive_lm_weights(batch.completion_mask, rewards))
    objective = Objective(aggregation="token_mean", positive_lm_coef=0.1)
    m_full = assert_micro_batches_exact(tiny_model, batch, objective, 5, ("loss/policy", "loss/positive_lm"))
    assert m_full["loss/positive_lm"] > 0


def test_entropy_bonus_changes_the_gradient_by_its_own(tiny_model, tokenizer):
    # grad(L + bonus) - grad(L) = -coef * grad(aggregated entropy): linear in the coefficient.
    batch = rollout_batch(tiny_model, tokenizer)
    found = []
    for coef in (0.0, 0.1, 0.2):
        trainer = Trainer(tiny_model, Objective(entropy_coef=coef), OptimConfig(), micro_batch_size=4)
        metrics = trainer.accumulate_gradients(batch)
        found.append((grads(trainer), metrics["loss/policy"], metrics["policy/entropy"]))
    (g0, l0, h), (g1, l1, _), (g2, l2, _) = found
    assert (g1 - g0).abs().max() > 1e-6
    torch.testing.assert_close(g2 - g0, 2 * (g1 - g0), atol=1e-6, rtol=1e-4)
    assert l1 == pytest.approx(l0 - 0.1 * h, abs=1e-6)


def test_step_changes_weights_and_reports_metrics(tiny_model, tokenizer):
    batch = rollout_batch(tiny_model, tokenizer)
    before = copy.deepcopy(tiny_model.state_dict())
    metrics = Trainer(tiny_model, Objective(), OptimConfig(lr=1e-3), micro_batch_size=4).step(batch)
    moved = [k for k, v in tiny_model.state_dict().items() if not torch.equal(v, before[k])]
    assert moved
    for key in ("loss/policy", "policy/entropy", "train/grad_norm", "time/optimizer_s", "policy/approx_kl"):
        assert key in metrics and metrics[key] == metrics[key]  # present and not NaN


def test_gradients_are_clipped_to_max_grad_norm(tiny_model, tokenizer):
    """clip_gradients leaves the stepped gradients with norm max_grad_norm (chosen below the
    batch's own norm, so clipping is active) and reports the norm before clipping."""
    batch = rollout_batch(tiny_model, tokenizer)
    free = Trainer(copy.deepcopy(tiny_model), Objective(), OptimConfig(max_grad_norm=1e9), micro_batch_size=4)
    free.accumulate_gradients(batch)
    norm = float(free.clip_gradients())
    trainer = Trainer(tiny_model, Objective(), OptimConfig(max_grad_norm=norm / 10), micro_batch_size=4)
    trainer.accumulate_gradients(batch)
    assert float(trainer.clip_gradients()) == pytest.approx(norm, rel=1e-5)
    assert float(grads(trainer).norm()) == pytest.approx(norm / 10, rel=1e-3)


def test_the_trainer_scores_at_its_sampling_temperature(tiny_model, tokenizer):
    """pi_old taken at temperature 2 (as an engine sampling at T = 2 reports it): a trainer at
    T = 2 is on-policy (ratio 1, approx_kl 0), one at T = 1 is not."""
    batch = rollout_batch(tiny_model, tokenizer)
    with torch.no_grad():
        batch = dataclasses.replace(batch, old_logp=batch_logprobs(tiny_model, batch, 2.0))

    def ratio_and_kl(temperature):
        trainer = Trainer(tiny_model, Objective(aggregation="token_mean"), OptimConfig(), micro_batch_size=4,
                          temperature=temperature)
        m = trainer.accumulate_gradients(batch)
        return m["policy/ratio_mean"], m["policy/approx_kl"]

    ratio, kl = ratio_and_kl(2.0)
    assert ratio == pytest.approx(1.0, abs=1e-5) and kl == pytest.approx(0.0, abs=1e-6)
    assert abs(ratio_and_kl(1.0)[1]) > 1e-3


def test_checkpoint_is_atomic_and_pruned(tiny_model, tmp_path):
    root = tmp_path / "checkpoints"
    (root / ".step_9.tmp123").mkdir(parents=True)  # debris of a killed save
    for step in (1, 2, 3):
        save_checkpoint(root, step, tiny_model, {"value": step}, keep=2)
    assert [p.name for p in list_checkpoints(root)] == ["step_2", "step_3"]
    torch.manual_seed(5)
    save_checkpoint(root, 4, tiny_model, {"value": 4}, keep=2)
    expected = torch.rand(3)
    torch.manual_seed(99)
    state = load_state(list_checkpoints(root)[-1])
    assert state["step"] == 4 and state["value"] == 4
    torch.testing.assert_close(torch.rand(3), expected)  # the RNG state came back


def test_a_step_that_makes_weights_non_finite_stops_with_the_update_and_parameter(tiny_model, tokenizer):
    # An update that overflows (bf16 weights, a huge lr on a huge Adam ratio) is simulated by an
    # optimiser step that writes an inf into one weight after updating.
    batch = rollout_batch(tiny_model, tokenizer)
    trainer = Trainer(tiny_model, Objective(), OptimConfig(lr=1e-3), micro_batch_size=4)
    name, param = list(tiny_model.named_parameters())[3]
    real_step = trainer.optimizer.step

    def overflowing_step():
        real_step()
        param.data.view(-1)[1] = float("inf")

    trainer.optimizer.step = overflowing_step
    with pytest.raises(NumericalError, match=rf"^optimiser update 1: the update made the weights non-finite "
                                             rf"\(first non-finite weight: {name}, 0 NaN, 1 inf of \d+"):
        trainer.step(batch)


def test_a_non_finite_gradient_norm_names_the_update_and_is_not_applied(tiny_model, tokenizer):
    batch = rollout_batch(tiny_model, tokenizer)
    trainer = Trainer(tiny_model, Objective(), OptimConfig(lr=1e-3), micro_batch_size=4)
    trainer.step(batch)  # update 1 is fine; AdamW counts it
    name, param = next(iter(tiny_model.named_parameters()))
    hook = param.register_hook(lambda g: torch.full_like(g, float("nan")))
    before = copy.deepcopy(tiny_model.state_dict())
    with pytest.raises(NumericalError, match=rf"^optimiser update 2: gradient norm is nan \(first non-finite "
                                             rf"gradient: {name}, \d+ NaN, 0 inf"):
        trainer.step(batch)
    hook.remove()
    assert all(torch.equal(v, before[k]) for k, v in tiny_model.state_dict().items())


def test_all_finite_and_first_nonfinite():
    ok = [torch.ones(3), torch.zeros(2, 2)]
    assert all_finite(ok) and first_nonfinite([("a", ok[0])]) is None
    # +inf and -inf in different tensors sum to NaN, still caught.
    assert not all_finite([torch.tensor([float("inf")]), torch.tensor([float("-inf")])])
    assert first_nonfinite([("a", torch.ones(2)), ("b", torch.tensor([1.0, float("nan"), float("inf")]))]) == \
        ("b", "1 NaN, 1 inf of 3")
