"""An fp32 master copy of a low-precision model's trainable weights (mixed-precision training).

With `model.dtype = "bfloat16"` the weights carry 8 significant bits: near 1.0 a bf16 step is
2^-8, so an update lr * g smaller than half of it rounds back to the same weight and is lost,
every step. Here the optimizer holds and steps an fp32 copy of each trainable bf16 weight;
the bf16 weight (which the forward, the engine sync and the checkpoint's safetensors read) is
refreshed from it after each step, so small updates add up in fp32 until they cross a bf16 step.

Gradients: a hook on each bf16 weight moves its gradient, once a backward has accumulated it,
into the fp32 master's `.grad` (added in fp32), so gradient accumulation over micro-batches is
fp32 too; the bf16 weight's own `.grad` stays None. AdamW's moments live beside the fp32
masters, so they are fp32. Trainable weights that are already fp32 (LoRA adapters, which peft
keeps in fp32 on a bf16 base) are stepped as they are: there is nothing to keep.

The masters are part of the optimizer state (`state_dict` / `load_state_dict`, keyed by the
parameter's name), so a checkpoint's `state.pt` holds them and a resume continues from the
exact fp32 values, not from the rounded bf16 weights that the safetensors hold.
"""

from __future__ import annotations

import torch
from torch import nn

from rlvr.errors import RlvrError

LOW_PRECISION = (torch.bfloat16, torch.float16)


class MasterWeights:
    """The parameters an optimizer should step for `model`'s trainable weights: an fp32 master
    for each low-precision one (with its gradient hook), the weight itself otherwise."""

    def __init__(self, model: nn.Module):
        self.names: list[str] = []
        self.params: list[nn.Parameter] = []  # what the optimizer steps, in the model's order
        self.pairs: list[tuple[nn.Parameter, nn.Parameter]] = []  # (model weight, its fp32 master)
        self.hooks = []
        for name, p in model.named_parameters():
            if not p.requires_grad:
                continue
            self.names.append(name)
            if p.dtype not in LOW_PRECISION:
                self.params.append(p)
                continue
            master = nn.Parameter(p.detach().clone().float())
            self.pairs.append((p, master))
            self.params.append(master)
            self.hooks.append(p.register_post_accumulate_grad_hook(_move_grad_to(master)))

    @property
    def active(self) -> bool:
        """Whether any weight has a master (False for a float32 model: then nothing differs)."""
        return bool(self.pairs)

    @torch.no_grad()
    def refresh_model(self) -> None:
        """Round each master into its model weight (after every optimizer step and load)."""
        for p, master in self.pairs:
            p.copy_(master)

    def named_gradients(self):
        """(name, fp32 gradient) of every stepped parameter, for error messages."""
        return ((n, p.grad) for n, p in zip(self.names, self.params) if p.grad is not None)

    def state_dict(self) -> dict[str, torch.Tensor]:
        name_of = {id(p): n for n, p in zip(self.names, self.params)}
        return {name_of[id(master)]: master.detach().clone() for _, master in self.pairs}

    @torch.no_grad()
    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        """Restore the fp32 masters saved by `state_dict`, then the model weights from them."""
        by_name = dict(zip(self.names, self.params))
        expected = {n for n, p in by_name.items() if any(p is m for _, m in self.pairs)}
        if set(state) != expected:
            missing, extra = sorted(expected - set(state)), sorted(set(state) - expected)
            raise RlvrError(f"the checkpoint's fp32 master weights do not match the model's trainable "
                            f"bf16 weights (missing {missing[:3]}, unexpected {extra[:3]}); was it written "
                            f"by another model or model.lora_rank?")
        for name, value in state.items():
            by_name[name].copy_(value)
        self.refresh_model()

    def remove_hooks(self) -> None:
        for handle in self.hooks:
            handle.remove()
        self.hooks = []


def _move_grad_to(master: nn.Parameter):
    def hook(p: torch.Tensor) -> None:
        if master.grad is None:
            master.grad = p.grad.float()
        else:
            master.grad.add_(p.grad.float())
        p.grad = None
    return hook
