"""LoRA on the vLLM engine: the trainer's adapters reach vLLM as a peft adapter folder.

vLLM 0.32 serves LoRA adapters on its CPU backend too (vllm.lora.punica_wrapper.punica_cpu;
checked here: greedy ids of tiny-arith with rank-8 adapters on q/k/v/o equal the merged
model's, tests/engines/test_vllm_real.py). It takes adapters from a folder, not from tensors
pushed into the running model, so each weight sync writes the adapters (the keys of
rlvr.train.lora.engine_weights, peft's layer name `default` dropped, under peft's
`base_model.model.` prefix) with an adapter_config.json as a new folder with a new LoRA id,
and the next generation names it; the base weights never change. vLLM on CPU switches
torch.compile off when LoRA is on (vllm.platforms.cpu), whatever model.vllm.compile says.

Refused by name at config load (config/vllm_section.py `vllm_lora_refusal`), what vLLM does
not take: a rank above its largest (512, the last of `VLLM_LORA_RANKS`), and targets other than
the Qwen2 / Llama projections vLLM's LoRA layers wrap (not the embeddings or the head).
"""

from __future__ import annotations

import json
import shutil
import tempfile
import weakref
from dataclasses import dataclass
from pathlib import Path

import safetensors.torch
import torch

from rlvr.engines.weight_keys import ADAPTER_PART

VLLM_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)  # vllm.config.lora.MaxLoRARanks


@dataclass(frozen=True)
class VLLMLora:
    """The trainer's LoRA settings (model.lora_rank, lora_alpha, lora_targets)."""

    rank: int
    alpha: float
    targets: tuple[str, ...]

    def llm_kwargs(self) -> dict:
        """`vllm.LLM` keyword arguments: LoRA on, room for one adapter of this rank."""
        return {"enable_lora": True, "max_loras": 1, "max_lora_rank": min(r for r in VLLM_LORA_RANKS if r >= self.rank)}


class AdapterFolders:
    """Writes each sync's adapters as a folder vLLM loads; keeps the two newest (vLLM reads a
    folder when the first generation names it)."""

    def __init__(self, lora: VLLMLora):
        self.lora, self.count = lora, 0
        self.root = Path(tempfile.mkdtemp(prefix="rlvr-vllm-lora-"))
        weakref.finalize(self, shutil.rmtree, self.root, True)

    def write(self, state_dict: dict[str, torch.Tensor]):
        """A vllm LoRARequest for these adapter tensors."""
        from vllm.lora.request import LoRARequest

        self.count += 1
        folder = self.root / f"v{self.count}"
        folder.mkdir()
        tensors = {"base_model.model." + k.replace(".default.", "."): t.detach().to("cpu", copy=True).contiguous()
                   for k, t in state_dict.items() if ADAPTER_PART.search(k)}
        safetensors.torch.save_file(tensors, str(folder / "adapter_model.safetensors"))
        config = {"peft_type": "LORA", "task_type": "CAUSAL_LM", "r": self.lora.rank, "lora_alpha": self.lora.alpha,
                  "target_modules": list(self.lora.targets), "bias": "none", "lora_dropout": 0.0}
        (folder / "adapter_config.json").write_text(json.dumps(config))
        shutil.rmtree(self.root / f"v{self.count - 2}", ignore_errors=True)
        return LoRARequest(f"rlvr-{self.count}", self.count, str(folder))
