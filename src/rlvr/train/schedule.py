"""The learning-rate schedule: lr_k = train.lr * factor(k), k the optimiser updates already
applied (0 for the first update), over N = train.steps * train.updates_per_batch updates.

With W warm-up updates and m = train.min_lr_ratio (transformers' `get_*_schedule_with_warmup`
formulas, so a run compares with TRL's; m = 0 is theirs exactly):

    warm-up   k < W:  factor = k / W                        (the first update has lr 0)
    constant  k >= W: factor = 1
    linear    k >= W: factor = m + (1 - m) * max(0, (N - k) / (N - W))
    cosine    k >= W: factor = m + (1 - m) * max(0, (1 + cos(pi * (k - W) / (N - W))) / 2)

The position k is counted here and saved in checkpoints (`state_dict`); a checkpoint written
before schedules existed has none, and resumes at AdamW's own update count instead (`resume_at`).
A resume that raises train.steps stretches the decay over the new N from the saved k on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from rlvr import names


def constant_decay(progress: float, floor: float) -> float:
    return 1.0


def linear_decay(progress: float, floor: float) -> float:
    return floor + (1.0 - floor) * max(0.0, 1.0 - progress)


def cosine_decay(progress: float, floor: float) -> float:
    return floor + (1.0 - floor) * max(0.0, 0.5 * (1.0 + math.cos(math.pi * progress)))


# progress (k - W) / (N - W) in [0, 1], m -> the factor after the warm-up
DECAYS = names.LR_SCHEDULE.bind({
    "constant": constant_decay, "linear": linear_decay, "cosine": cosine_decay,
}, table="DECAYS")


def lr_factor(kind: str, k: int, total: int, warmup: int, min_ratio: float = 0.0) -> float:
    """The multiplier of train.lr for the update after `k` applied ones (formulas above)."""
    if k < warmup:
        return k / warmup
    # transformers' max(1, N - W): a warm-up as long as the run leaves one decay step
    return DECAYS[kind]((k - warmup) / max(1, total - warmup), min_ratio)


@dataclass(frozen=True)
class ScheduleConfig:
    kind: str = "constant"
    total: int = 1  # optimiser updates in the run
    warmup: int = 0  # warm-up updates
    min_ratio: float = 0.0

    @classmethod
    def from_train(cls, train) -> "ScheduleConfig":
        """From a config's [train] section: warmup_ratio is a share of the updates, rounded up
        (transformers' `get_warmup_steps`)."""
        total = train.steps * train.updates_per_batch
        warmup = train.warmup_steps if train.warmup_ratio is None else math.ceil(train.warmup_ratio * total)
        return cls(train.lr_schedule, total, warmup, train.min_lr_ratio)

    @property
    def varies(self) -> bool:
        """False for the constant rate without warm-up: train.lr at every update."""
        return self.kind != "constant" or self.warmup > 0


class LRSchedule:
    """Sets each parameter group's lr before an update; `k` counts the applied updates."""

    def __init__(self, optimizer: torch.optim.Optimizer, config: ScheduleConfig):
        self.optimizer, self.config, self.k = optimizer, config, 0
        self.base_lrs = [g["lr"] for g in optimizer.param_groups]

    def factor(self) -> float:
        c = self.config
        return lr_factor(c.kind, self.k, c.total, c.warmup, c.min_ratio)

    def set_lr(self) -> float:
        """Give the next update its rate; returns the first group's. The constant schedule
        leaves the groups untouched (bit-identical to a run without schedules)."""
        if self.config.varies:
            f = self.factor()
            for group, base in zip(self.optimizer.param_groups, self.base_lrs):
                group["lr"] = base * f
        return self.optimizer.param_groups[0]["lr"]

    def advance(self) -> None:
        self.k += 1

    def state_dict(self) -> dict:
        return {"updates_done": self.k}

    def load_state_dict(self, state: dict) -> None:
        self.k = int(state["updates_done"])

    def resume_at(self, optimizer_state: dict) -> None:
        """No saved schedule (an older checkpoint): AdamW's update count, the same number."""
        steps = [float(s["step"]) for s in optimizer_state.get("state", {}).values() if "step" in s]
        self.k = int(max(steps, default=0))
