"""The learning-rate schedule (train/schedule.py): the rate the optimiser applies at each update,
hand-computed; transformers' schedules for min_lr_ratio = 0; the config's rules."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest
import torch

from rlvr.algo import Objective
from rlvr.config import load_config
from rlvr.errors import ConfigError
from rlvr.train import OptimConfig, Trainer
from rlvr.train.schedule import LRSchedule, ScheduleConfig, lr_factor


def _trainer_tests():
    spec = importlib.util.spec_from_file_location("trainer_tests", Path(__file__).with_name("test_trainer.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


rollout_batch = _trainer_tests().rollout_batch


def applied_rates(trainer: Trainer, batch, updates: int) -> list[float]:
    """The lr of the parameter group at each optimizer.step() call, read inside the call."""
    seen, step = [], trainer.optimizer.step

    def recording_step(*args, **kwargs):
        seen.append(trainer.optimizer.param_groups[0]["lr"])
        return step(*args, **kwargs)

    trainer.optimizer.step = recording_step
    metrics = [trainer.step(batch) for _ in range(updates)]
    assert [m["train/lr"] for m in metrics] == seen  # the logged rate is the applied one
    return seen


# N = 6 updates, W = 2 warm-up updates, lr = 1e-3; k = updates applied before this one.
#   warm-up: k/W -> 0, 0.5
#   cosine, progress p = (k - 2) / 4 = 0, 1/4, 1/2, 3/4: (1 + cos(pi p)) / 2 = 1, 0.853553, 0.5, 0.146447
#   linear with m = 0.1: m + (1 - m)(6 - k)/4 = 1, 0.775, 0.55, 0.325
HAND = {
    "cosine": [0.0, 0.5, 1.0, (1 + math.sqrt(0.5)) / 2, 0.5, (1 - math.sqrt(0.5)) / 2],
    "linear": [0.0, 0.5, 1.0, 0.775, 0.55, 0.325],
}


@pytest.mark.parametrize("kind", sorted(HAND))
def test_the_optimiser_applies_the_scheduled_rate_at_each_update(tiny_model, tokenizer, kind):
    batch = rollout_batch(tiny_model, tokenizer)
    schedule = ScheduleConfig(kind, total=6, warmup=2, min_ratio=0.1 if kind == "linear" else 0.0)
    trainer = Trainer(tiny_model, Objective(), OptimConfig(lr=1e-3, schedule=schedule), micro_batch_size=12)
    assert applied_rates(trainer, batch, 6) == pytest.approx([1e-3 * f for f in HAND[kind]], rel=1e-12)


def test_the_constant_rate_is_left_untouched_and_not_logged(tiny_model, tokenizer):
    trainer = Trainer(tiny_model, Objective(), OptimConfig(lr=3e-4), micro_batch_size=12)
    metrics = trainer.step(rollout_batch(tiny_model, tokenizer))
    assert "train/lr" not in metrics and trainer.optimizer.param_groups[0]["lr"] == 3e-4
    assert trainer.schedule.k == 1


@pytest.mark.parametrize("total, warmup", [(10, 0), (10, 3), (7, 7), (100, 10), (1, 0)])
def test_min_lr_ratio_zero_is_transformers_schedule(total, warmup):
    from transformers import (get_constant_schedule_with_warmup, get_cosine_schedule_with_warmup,
                              get_linear_schedule_with_warmup)

    theirs = {"constant": lambda o: get_constant_schedule_with_warmup(o, warmup),
              "linear": lambda o: get_linear_schedule_with_warmup(o, warmup, total),
              "cosine": lambda o: get_cosine_schedule_with_warmup(o, warmup, total)}
    for kind, make in theirs.items():
        scheduler = make(torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0))
        for k in range(total):
            assert lr_factor(kind, k, total, warmup) == pytest.approx(scheduler.get_last_lr()[0], abs=1e-12), (kind, k)
            scheduler.optimizer.step()
            scheduler.step()


def test_the_position_survives_a_state_round_trip_and_an_old_checkpoint_uses_adams_count():
    p = torch.zeros(2, requires_grad=True)
    optimizer = torch.optim.AdamW([p], lr=1.0)
    schedule = LRSchedule(optimizer, ScheduleConfig("linear", total=10))
    for _ in range(3):
        schedule.set_lr()
        p.grad = torch.ones(2)
        optimizer.step()
        schedule.advance()
    again = LRSchedule(torch.optim.AdamW([p], lr=1.0), ScheduleConfig("linear", total=10))
    again.load_state_dict(schedule.state_dict())
    assert again.k == 3 and again.set_lr() == pytest.approx(0.7)  # (10 - 3) / 10
    old = LRSchedule(torch.optim.AdamW([p], lr=1.0), ScheduleConfig("linear", total=10))
    old.resume_at(optimizer.state_dict())  # no saved schedule: AdamW's own step count, 3
    assert old.k == 3


def test_warmup_ratio_rounds_up_and_the_rules_name_the_keys():
    t = load_config(None, ["train.steps=10", "train.updates_per_batch=2", "train.warmup_ratio=0.11",
                           "train.lr_schedule=cosine"]).train
    assert ScheduleConfig.from_train(t) == ScheduleConfig("cosine", total=20, warmup=3)  # ceil(2.2)
    bad = [(["train.warmup_steps=2", "train.warmup_ratio=0.1"], "both set the warm-up"),
           (["train.steps=3", "train.warmup_steps=4"], r"warmup_steps \(4\) is above the run's 3"),
           (["train.min_lr_ratio=0.1"], "min_lr_ratio is only read by"),
           (["train.lr_schedule=cosinus"], "lr_schedule")]
    for overrides, message in bad:
        with pytest.raises(ConfigError, match=message):
            load_config(None, overrides)
