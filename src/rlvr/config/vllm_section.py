"""[model.vllm]: how the vLLM engine (model.engine = "vllm") is started, on a CPU or a CUDA GPU.

Each field's comment is its description (docs/scaling.md, "vLLM engine", repeats them with the
figures behind the defaults). Fields marked CPU or CUDA apply only on that platform; the other
ignores them.
"""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import Field

from rlvr.config.section import Section


class VLLMSection(Section):
    # Weights and activations inside vLLM: "auto" = model.dtype. vLLM's CPU backend runs
    # float32 and bfloat16 (bfloat16 only on CPUs with AVX-512 BF16 / AMX to be fast).
    dtype: Literal["auto", "float32", "bfloat16"] = "auto"
    # CPU: GiB of KV cache (vLLM's VLLM_CPU_KVCACHE_SPACE, set for the engine core it starts;
    # an explicit VLLM_CPU_KVCACHE_SPACE in the environment wins). vLLM's own default, 4 GiB,
    # is far more than rlvr's small models need on a shared machine.
    cpu_kv_cache_gib: float = Field(1.0, gt=0, le=4096)
    # CUDA: share of the GPU's memory vLLM takes for weights and KV cache; under vLLM's 0.9 so
    # that a trainer on the same GPU has room.
    gpu_memory_utilization: float = Field(0.5, gt=0, le=1)
    # Skip CUDA-graph capture (CUDA) and torch.compile (both): a faster start, slower decode.
    enforce_eager: bool = False
    # torch.compile of the model (vLLM's compilation mode 3, "VLLM_COMPILE"), off = mode 0. On
    # CPU it is most of a ~40 s start for a tiny model; see docs/scaling.md for what it buys.
    compile: bool = True
    # Longest prompt + completion vLLM plans its KV cache for; None = the model's context.
    max_model_len: Optional[int] = Field(None, ge=1, le=16_777_216)
    # Reuse the KV cache of a shared prompt prefix (a group's G samples); dropped at each sync.
    prefix_caching: bool = True


VLLM_MAX_LORA_RANK = 512  # vllm.config.lora.MaxLoRARanks' largest (rlvr.engines.vllm_lora)
VLLM_LORA_TARGETS = frozenset({"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"})


def vllm_lora_refusal(rank: int, targets) -> str | None:
    """Why vLLM 0.32 cannot serve adapters of this rank on these targets (naming the field),
    or None: its LoRA layers wrap the attention and MLP projections only."""
    if rank > VLLM_MAX_LORA_RANK:
        return f"model.lora_rank = {rank}: {VLLM_MAX_LORA_RANK} is the largest rank vLLM's LoRA takes; use model.engine = 'hf'"
    odd = [t for t in targets if t not in VLLM_LORA_TARGETS]
    if odd:
        return (f"model.lora_targets: vLLM's LoRA does not take {odd} (it takes {sorted(VLLM_LORA_TARGETS)}); "
                "use model.engine = 'hf'")
    return None
