"""Gradient (activation) checkpointing, `train.gradient_checkpointing = true`: each decoder
layer's activations are dropped after the forward and recomputed in the backward, trading about
one more forward pass for the activation memory of all but one layer (Chen et al. 2016,
arXiv:1604.06174). The gradients are those of the plain model (tests/train/test_activation_memory.py).
"""

from __future__ import annotations

from torch import nn

from rlvr.errors import ConfigError
from rlvr.train.lora import is_lora


def enable_gradient_checkpointing(model: nn.Module) -> None:
    """Turn it on for the training model (the engine's copy, made before, generates without it).
    Non-reentrant checkpointing: correct with frozen inputs, as LoRA's embedding is."""
    inner = model.get_base_model() if is_lora(model) else model
    if not getattr(inner, "supports_gradient_checkpointing", False):
        raise ConfigError(f"train.gradient_checkpointing: {type(inner).__name__} does not support it")
    kwargs = {"use_reentrant": False}
    if hasattr(inner, "activation_checkpointing_enable"):  # transformers >= 5.2x; the older name warns there
        inner.activation_checkpointing_enable(activation_checkpointing_kwargs=kwargs)
    else:
        inner.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs)
