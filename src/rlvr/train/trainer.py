"""The optimiser step: micro-batched forward/backward with gradient accumulation, clipping,
AdamW. Algorithm-blind: it receives an `Objective` and never asks which one.

Micro-batching is exact: the objective's aggregation weights are computed once on the full
batch, so the sum of the micro-batch losses is the full-batch loss, and so are the gradients.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass

import torch
from transformers import PreTrainedModel

from rlvr.algo import Objective
from rlvr.errors import NumericalError
from rlvr.models.finite import all_finite, first_nonfinite
from rlvr.train.logprobs import DEFAULT_LOGIT_CHUNK, completion_logprobs
from rlvr.train.lora import engine_weights
from rlvr.train.master_weights import MasterWeights
from rlvr.train.schedule import LRSchedule, ScheduleConfig
from rlvr.types import Batch


@dataclass(frozen=True)
class OptimConfig:
    lr: float = 1e-5
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0
    schedule: ScheduleConfig = ScheduleConfig()  # constant: `lr` at every update
    # bf16/fp16 trainable weights are stepped through an fp32 copy (rlvr.train.master_weights);
    # False steps them in their own dtype. No effect on float32 weights.
    master_weights: bool = True


class Trainer:
    def __init__(self, model: PreTrainedModel, objective: Objective, optim: OptimConfig, *,
                 micro_batch_size: int, temperature: float = 1.0, logit_chunk: int = DEFAULT_LOGIT_CHUNK,
                 share_prompts: bool = True):
        """logit_chunk: tokens per LM-head chunk when computing log-probs and entropy (0: the
        whole micro-batch's (B, T, V) logits at once); see `rlvr.train.logprobs`.
        share_prompts: the forward runs each distinct prompt of a micro-batch once
        (`rlvr.train.shared_prompt`; the same function, the gradients' sums in another order)."""
        if logit_chunk < 0:
            raise ValueError(f"logit_chunk = {logit_chunk}: a number of tokens, >= 0 (0 turns chunking off)")
        self.model = model
        self.logit_chunk = logit_chunk
        self.share_prompts = share_prompts
        self.objective = objective
        self.optim = optim
        self.micro_batch_size = micro_batch_size
        self.temperature = temperature
        self.master = MasterWeights(model) if optim.master_weights else None
        stepped = self.master.params if self.master is not None else [p for p in model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW(  # frozen weights (LoRA's base) are not its business
            stepped, lr=optim.lr, betas=optim.betas, eps=optim.eps, weight_decay=optim.weight_decay,
        )
        self.schedule = LRSchedule(self.optimizer, optim.schedule)

    def accumulate_gradients(self, batch: Batch) -> dict[str, float]:
        """Zero the gradients, then add those of every micro-batch. Returns the loss, the
        objective's metrics (full-batch means) and the time spent per phase."""
        self.model.train()
        self.optimizer.zero_grad(set_to_none=True)
        weights = self.objective.weights(batch.completion_mask, batch.group_ids)
        sums: dict[str, float] = defaultdict(float)
        for index in torch.arange(batch.input_ids.shape[0]).split(self.micro_batch_size):
            self.micro_step(batch.rows(index).to(self.device), weights[index].to(self.device), sums)
        return dict(sums)

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def micro_step(self, micro: Batch, w: torch.Tensor, sums: dict[str, float]) -> None:
        """Forward and backward of one micro-batch with its rows `w` of the full-batch
        weights; adds its loss, metrics and timings to `sums`."""
        t0 = time.perf_counter()
        logp, entropy = completion_logprobs(self.model, micro, self.temperature, chunk=self.logit_chunk,
                                            entropy_grad=self.objective.needs_entropy_grad,
                                            share_prompts=self.share_prompts)
        loss, metrics = self.objective.loss(logp, micro, w, entropy=entropy)
        t1 = time.perf_counter()
        loss.backward()
        sums["time/train_forward_s"] += t1 - t0
        sums["time/backward_s"] += time.perf_counter() - t1
        sums["loss/policy"] += float(loss.detach())
        for name, value in metrics.items():
            sums[name] += float(value)

    def clip_gradients(self) -> torch.Tensor:
        """Clip to `max_grad_norm`; returns the norm before clipping (a plain scalar tensor)."""
        stepped = [p for group in self.optimizer.param_groups for p in group["params"]]  # fp32 masters
        return torch.nn.utils.clip_grad_norm_(stepped, self.optim.max_grad_norm)

    def full_state_dict(self) -> dict[str, torch.Tensor]:
        """The model's whole weights, for the engine and checkpoints (FSDP gathers them)."""
        return self.model.state_dict()

    def engine_weights(self) -> dict[str, torch.Tensor]:
        """What a weight sync sends the engine (only the adapters of a LoRA policy)."""
        return engine_weights(self.model)

    def checkpoint_weights(self) -> dict[str, torch.Tensor] | None:
        """Weights a checkpoint writes instead of the model's own; None: the model's."""
        return None

    def optimizer_state(self) -> dict:
        """The optimizer state as `torch.optim` writes it for the unsharded model, with the fp32
        master weights under "master_weights" when there are any."""
        state = self.optimizer.state_dict()
        if self.master is not None and self.master.active:
            state["master_weights"] = self.master.state_dict()
        return state

    def load_optimizer_state(self, state: dict) -> None:
        """A checkpoint without masters (model.master_weights = "none", or float32) starts
        them from the model's loaded weights, as a fresh run does."""
        state = dict(state)
        masters = state.pop("master_weights", None)
        self.optimizer.load_state_dict(state)
        if masters is not None and self.master is not None and self.master.active:
            self.master.load_state_dict(masters)

    def step(self, batch: Batch) -> dict[str, float]:
        """One optimiser step on the batch. A non-finite gradient norm (nothing applied), or
        weights that the step made non-finite, stop training with a `NumericalError` naming the
        update and the first parameter at fault; the caller saves no checkpoint of them."""
        metrics = self.accumulate_gradients(batch)
        t0 = time.perf_counter()
        grad_norm = self.clip_gradients()
        if not torch.isfinite(grad_norm):
            grads = (self.master.named_gradients() if self.master is not None else
                     ((n, p.grad) for n, p in self.model.named_parameters() if p.grad is not None))
            raise NumericalError(f"{self.update_name(1)}: gradient norm is {float(grad_norm)} "
                                 f"({self.culprit(grads, 'gradient')}); the step was not applied")
        lr = self.schedule.set_lr()
        self.optimizer.step()
        if self.master is not None:
            self.master.refresh_model()  # the bf16 weights the forward and the engine read
        self.schedule.advance()
        t1 = time.perf_counter()
        if not all_finite(self.model.parameters()):
            raise NumericalError(f"{self.update_name(0)}: the update made the weights non-finite "
                                 f"({self.culprit(self.model.named_parameters(), 'weight')}; train.lr = "
                                 f"{self.optim.lr}, this update's rate {lr:.3g}); stopping without saving them")
        metrics["time/finite_check_s"] = time.perf_counter() - t1
        metrics["time/optimizer_s"] = t1 - t0
        metrics["train/grad_norm"] = float(grad_norm)
        if self.schedule.config.varies:  # a constant rate logs nothing new (golden runs unchanged)
            metrics["train/lr"] = lr
        return metrics

    def update_name(self, ahead: int) -> str:
        """"optimiser update N", counted by AdamW's state (so it survives a resume); `ahead` = 1
        before the step is applied. It equals the run's step when train.updates_per_batch = 1."""
        counts = [float(s["step"]) for s in self.optimizer.state.values() if "step" in s]
        return f"optimiser update {int(max(counts, default=0)) + ahead}"

    @staticmethod
    def culprit(named, what: str) -> str:
        found = first_nonfinite(named)
        return f"first non-finite {what}: {found[0]}, {found[1]}" if found else f"no single non-finite {what}"
