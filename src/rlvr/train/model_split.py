"""Split a causal LM into its body (tokens → final hidden states) and its LM head (hidden →
logits), so that the trainer can apply the head a chunk of positions at a time
(`rlvr.train.logprobs`) instead of materialising (B, T, V) float32 logits at once.

The split is only taken where `head(body(x).last_hidden_state)` is exactly the model's
`forward(x).logits`. Transformers' decoder-only LMs (Qwen2, Llama, Mistral, ...) compute their
logits that way; a few post-process them (Gemma 2/3's final soft-capping, Granite's and
Cohere's logit scales), and those keep the plain path, as does a model whose root forward has
to run for its parameters to exist (FSDP gathers the root's shards, the embedding and the head
among them, in the root's pre-forward hook, which calling the body directly would skip).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.distributed.fsdp import FSDPModule
from transformers import PreTrainedModel

from rlvr.train.lora import AdaptersOff, is_lora

# Config fields through which a transformers LM changes its logits after the head's matmul
# (checked against transformers 5.24's modeling files: gemma2/3, cohere, granite, ...).
POST_HEAD_FIELDS = ("final_logit_softcapping", "logit_softcapping", "logits_scaling", "logit_scale",
                    "output_multiplier_scale")


@dataclass(frozen=True)
class SplitModel:
    """body: (input_ids, attention_mask, position_ids) → last_hidden_state (B, L, H);
    head: (..., H) → (..., V), the model's own output embeddings (a patched fp32 head included)."""

    body: torch.nn.Module
    head: torch.nn.Module


def split_model(model: object) -> SplitModel | str:
    """The model's body and head, or a one-line reason why it does not split."""
    if isinstance(model, AdaptersOff):  # the LoRA reference: the policy's split, adapters off
        inner = split_model(model.policy)
        return inner if isinstance(inner, str) else SplitModel(body=model.calling(inner.body),
                                                               head=model.calling(inner.head))
    if isinstance(model, FSDPModule):
        return "an FSDP-sharded model gathers its root parameters only inside its own forward"
    model = _without_peft_wrapper(model)
    if not isinstance(model, PreTrainedModel):
        return f"{type(model).__name__} is not a transformers PreTrainedModel"
    name = type(model).__name__
    changed = [f for f in POST_HEAD_FIELDS if getattr(model.config, f, None) not in (None, 1, 1.0)]
    if changed:
        return f"{name} changes its logits after the head (config.{changed[0]})"
    head, body = model.get_output_embeddings(), model.get_decoder()
    if head is None:
        return f"{name} has no output embeddings (get_output_embeddings() is None)"
    if body is model or body is None:
        return f"{name} has no separate decoder body (get_decoder())"
    return SplitModel(body=body, head=head)


def _without_peft_wrapper(model: object) -> object:
    """A LoRA PeftModel's transformers model, whose layers carry the adapters (so calling its
    body and head is calling the adapted model, adapters on). rlvr wraps only with LoRA."""
    return model.get_base_model() if is_lora(model) else model
