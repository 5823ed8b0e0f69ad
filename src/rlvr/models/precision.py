"""The FP32 LM head (ScaleRL, arXiv:2510.13786): compute the output projection in float32.

In a bfloat16 model the logits of the sampler and of the trainer come out of two different
bf16 matmuls (different kernels, batch shapes, accumulation orders), and their rounding alone
moves the importance ratio off 1. Casting the bf16 logits afterwards does not help: the
precision is already gone. So the head's matmul itself runs in float32, from the bf16 hidden
state, in both the in-process engine and the trainer. (The vLLM engine computes its logits its
own way; this switch does not reach it.)
"""

from __future__ import annotations

import types

import torch
import torch.nn.functional as F

from rlvr.errors import ModelLoadError


def _fp32_linear(self: torch.nn.Linear, hidden: torch.Tensor) -> torch.Tensor:
    bias = None if self.bias is None else self.bias.float()
    return F.linear(hidden.float(), self.weight.float(), bias)


def use_fp32_head(model: torch.nn.Module) -> None:
    """Make the model's output projection compute in float32 (logits come out float32).

    The weights keep their dtype and their names (the state dict is unchanged); only the head's
    `forward` is replaced, on this instance. A deep copy of the model keeps the change."""
    head = model.get_output_embeddings()
    if not isinstance(head, torch.nn.Linear):
        raise ModelLoadError(f"model.fp32_head: the model's output embeddings are {type(head).__name__}, "
                             "not a Linear; set model.fp32_head = false for this model")
    head.forward = types.MethodType(_fp32_linear, head)
