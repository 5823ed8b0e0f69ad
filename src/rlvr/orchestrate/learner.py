"""The trainer's side of a step: scored groups → the batch chain → the policy's updates (and
the critic's, for GAE). Which weights go to the engine and into a checkpoint is the trainer's
business (train/trainer.py, train/fsdp.py), not the loop's."""

from __future__ import annotations

from dataclasses import dataclass

from rlvr.engines.loading import pad_token_id
from rlvr.orchestrate.batch_builder import BatchModels, build_batch
from rlvr.orchestrate.parts import Parts
from rlvr.orchestrate.plan import RunPlan
from rlvr.types import Batch, Scored


@dataclass(frozen=True)
class Learned:
    """What a step's training produced: the batch it trained on, the trainer's metrics and
    the batch chain's (shaping, KL in the reward, mismatch, the critic's)."""

    batch: Batch
    train_metrics: dict[str, float]
    batch_metrics: dict[str, float]


class Learner:
    def __init__(self, plan: RunPlan, parts: Parts):
        self.config, self.parts, self.spec = plan.config, parts, plan.batch
        self.models = BatchModels(parts.model, parts.ref_model, parts.critic, pad_token_id(parts.tokenizer))

    def learn(self, groups: list[list[Scored]], steps_done: int) -> Learned:
        """Train on the groups: `train.updates_per_batch` optimiser steps, after the critic's
        step when there is one. VAPO's value pretraining: for the first
        `critic.pretrain_steps` steps the critic learns and the policy waits."""
        p = self.parts
        built = build_batch(groups, self.spec, self.models)
        batch, batch_metrics, critic_data = built.batch, dict(built.metrics), built.critic_targets
        if critic_data is not None:
            batch_metrics.update(p.critic.step(batch, *critic_data))
        if critic_data is not None and steps_done < self.config.critic.pretrain_steps:
            return Learned(batch, {"critic/pretraining": 1.0}, batch_metrics)
        metrics: dict[str, float] = {}
        for _ in range(self.config.train.updates_per_batch):
            metrics = p.trainer.step(batch)
        return Learned(batch, metrics, batch_metrics)

    def engine_weights(self) -> dict:
        return self.parts.trainer.engine_weights()

    def checkpoint_weights(self) -> dict | None:
        return self.parts.trainer.checkpoint_weights()

    def state_dict(self) -> dict:
        trainer = self.parts.trainer
        state = {"optimizer": trainer.optimizer_state(), "lr_schedule": trainer.schedule.state_dict()}
        critic = self.parts.critic
        if critic is not None:
            state.update(critic=critic.model.state_dict(), critic_optimizer=critic.optimizer.state_dict())
        return state

    def load_state_dict(self, state: dict) -> None:
        trainer = self.parts.trainer
        trainer.load_optimizer_state(state["optimizer"])
        if "lr_schedule" in state:
            trainer.schedule.load_state_dict(state["lr_schedule"])
        else:  # a checkpoint from before schedules: its AdamW update count is the position
            trainer.schedule.resume_at(state["optimizer"])
        critic = self.parts.critic
        if critic is not None:
            critic.model.load_state_dict(state["critic"])
            critic.optimizer.load_state_dict(state["critic_optimizer"])
