"""The trainer sharded with PyTorch FSDP2 (`fully_shard`) across the ranks of a torchrun launch.

Every rank holds the same full batch (each rank generates it with the same seed), so the
aggregation weights W are computed on the full batch as in the one-process trainer. Rank r
trains on its contiguous slice of the rows, so its loss is a partial sum of the full loss
L = sum_r L_r. FSDP's gradient reduction is set to a plain sum (its default divides by the
world size, which would give the mean of the partial gradients, 1/N of the full one), so each
rank's shard of the gradient is the shard of the full-batch gradient.

Sharded: parameters, gradients and AdamW state (each decoder layer is one FSDP unit, the root
holds the embeddings, final norm and head). Not sharded: the engine's copy of the weights, the
reference model, and the rollouts, which every rank computes in full.
"""

from __future__ import annotations

import math
from collections import defaultdict

import torch
import torch.distributed as dist
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_model_state_dict,
    get_optimizer_state_dict,
    set_optimizer_state_dict,
)
from torch.distributed.fsdp import FSDPModule, fully_shard
from torch.distributed.tensor import DTensor
from transformers import PreTrainedModel

from rlvr.errors import ConfigError, RlvrError
from rlvr.train.distributed import reduce_metrics
from rlvr.train.logprobs import completion_logits
from rlvr.train.trainer import Trainer
from rlvr.types import Batch

FULL = StateDictOptions(full_state_dict=True)


def shard_model(model: PreTrainedModel) -> None:
    """Shard `model` in place: each decoder layer (the classes the model lists in
    `_no_split_modules`), then the root. Gradients are reduced by sum, not mean."""
    layer_names = set(model._no_split_modules or ())
    layers = [m for m in model.modules() if type(m).__name__ in layer_names]
    if not layers:
        raise ConfigError(f"train.fsdp: {type(model).__name__} names no decoder layer class "
                          f"(_no_split_modules) to shard by")
    for layer in layers:
        fully_shard(layer)
    fully_shard(model)
    for module in model.modules():
        if isinstance(module, FSDPModule):
            module.set_gradient_divide_factor(1.0)
            # A custom factor makes FSDP reduce with PREMUL_SUM, which gloo lacks; with a plain
            # SUM the factor 1 is applied as a (no-op) scaling outside the collective.
            module.set_force_sum_reduction_for_comms(True)


def rank_rows(n_rows: int, rank: int, world_size: int, micro_batch_size: int) -> list[torch.Tensor]:
    """Rank `rank`'s contiguous slice of the rows, in micro-batches of at most
    `micro_batch_size` rows, as many micro-batches on every rank (FSDP's collectives run once
    per forward and backward, so every rank must run the same number); a rank with fewer rows
    than micro-batches gets empty ones."""
    if n_rows < world_size:
        raise RlvrError(f"the batch has {n_rows} rows, fewer than the {world_size} FSDP ranks; "
                        f"raise sampling.prompts_per_step or sampling.group_size")
    slices = torch.arange(n_rows).tensor_split(world_size)
    n_micro = math.ceil(len(slices[0]) / micro_batch_size)  # tensor_split puts the longest first
    return list(slices[rank].tensor_split(n_micro))


class FSDPTrainer(Trainer):
    """`Trainer` on a model sharded across the ranks of the (already joined) process group.
    Shards `model` in place before making the optimizer, which must hold the shards."""

    def __init__(self, model: PreTrainedModel, *args, **kwargs):
        shard_model(model)
        super().__init__(model, *args, **kwargs)
        if self.master is not None and self.master.active:  # config/coherence_run.py refuses it first
            raise RlvrError("fp32 master weights with FSDP are not supported yet: set model.master_weights = 'none'")
        self.rank, self.world_size = dist.get_rank(), dist.get_world_size()

    def accumulate_gradients(self, batch: Batch) -> dict[str, float]:
        """This rank's rows, weighted by the full batch's W; metrics summed over the ranks."""
        self.model.train()
        self.optimizer.zero_grad(set_to_none=True)
        weights = self.objective.weights(batch.completion_mask, batch.group_ids)
        sums: dict[str, float] = defaultdict(float)
        for index in rank_rows(len(batch.input_ids), self.rank, self.world_size, self.micro_batch_size):
            if len(index):
                self.micro_step(batch.rows(index).to(self.device), weights[index].to(self.device), sums)
            else:  # nothing left here: join the collectives with a zero gradient
                one_row = batch.rows(torch.tensor([0])).to(self.device)
                completion_logits(self.model, one_row).sum().mul(0.0).backward()
        return reduce_metrics(dict(sums))

    def clip_gradients(self) -> torch.Tensor:
        """The global norm over all shards (clip_grad_norm_ reduces it across ranks)."""
        norm = super().clip_gradients()
        return norm.full_tensor() if isinstance(norm, DTensor) else norm

    def full_state_dict(self) -> dict[str, torch.Tensor]:
        """The whole weights, gathered on every rank (a collective: every rank calls it).

        Tied parameters (an LM head sharing the embedding) come back as one tensor under both
        names, as from an unsharded model, so that a checkpoint stores it once."""
        weights = get_model_state_dict(self.model, options=FULL)
        first_name: dict[int, str] = {}
        for name, p in self.model.named_parameters(remove_duplicate=False):
            weights[name] = weights[first_name.setdefault(id(p), name)]
        return weights

    def engine_weights(self) -> dict[str, torch.Tensor]:
        return self.full_state_dict()  # a collective: every rank syncs (LoRA is refused with FSDP)

    def checkpoint_weights(self) -> dict[str, torch.Tensor]:
        return self.full_state_dict()  # every rank gathers, rank 0 alone writes

    def optimizer_state(self) -> dict:
        """The whole AdamW state in the one-process layout (a collective: every rank calls it),
        so a checkpoint resumes with or without FSDP."""
        by_name = get_optimizer_state_dict(self.model, self.optimizer, options=FULL)
        index = {name: i for i, name in enumerate(self._param_names())}
        groups = [{**g, "params": [index[n] for n in g["params"]]} for g in by_name["param_groups"]]
        return {"state": {index[n]: s for n, s in by_name["state"].items()}, "param_groups": groups}

    def load_optimizer_state(self, state: dict) -> None:
        """Shard a whole one-process AdamW state onto this rank."""
        names = self._param_names()
        groups = [{**g, "params": [names[i] for i in g["params"]]} for g in state["param_groups"]]
        by_name = {"state": {names[i]: s for i, s in state["state"].items()}, "param_groups": groups}
        set_optimizer_state_dict(self.model, self.optimizer, by_name, options=FULL)

    def _param_names(self) -> list[str]:
        """Names of the optimizer's parameters, in the order `torch.optim` numbers them."""
        return [n for n, p in self.model.named_parameters() if p.requires_grad]
