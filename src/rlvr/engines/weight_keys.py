"""Which keys a weight load must and may carry (the `Engine.load_weights` contract).

A full model must receive every key it has. A LoRA model (peft adapters injected: keys with
a `lora_A` / `lora_B` / ... part) must receive every adapter key and may omit the base weights,
which LoRA training never changes. In both cases every key received must be one the engine's
model has: nothing is ever ignored silently.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rlvr.errors import RlvrError

ADAPTER_PART = re.compile(r"\.lora_(A|B|embedding_A|embedding_B|magnitude_vector)\.")


class WeightKeyError(RlvrError):
    """A weight sync whose keys do not fit the engine's model."""


def is_adapter_key(key: str) -> bool:
    return ADAPTER_PART.search(key) is not None


def required_keys(own: Iterable[str]) -> set[str]:
    """The keys a load must carry: the adapters of a LoRA model, else all of them."""
    own = set(own)
    adapters = {k for k in own if is_adapter_key(k)}
    return adapters or own


def check_weight_keys(received: Iterable[str], own: Iterable[str]) -> None:
    """Raise WeightKeyError naming the first few unknown or missing keys."""
    received, own = set(received), set(own)
    unknown = sorted(received - own)
    if unknown:
        raise WeightKeyError(f"load_weights: {len(unknown)} key(s) the engine's model does not have, "
                             f"e.g. {unknown[:3]} (was the engine built with the trainer's LoRA settings?)")
    missing = sorted(required_keys(own) - received)
    if missing:
        kind = "adapter key(s)" if any(is_adapter_key(k) for k in own) else "key(s) of the full model"
        raise WeightKeyError(f"load_weights: {len(missing)} {kind} missing, e.g. {missing[:3]}")
