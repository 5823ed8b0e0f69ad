"""Which rollout engine a run gets: `model.engine` (rlvr/names.py ENGINE) picks a builder, and
the in-process engine's builder picks by `orchestrate.backend` (local, or Ray actors) and, on
the local backend, `orchestrate.rollout_workers` (one process, or local worker processes). Training
builds from `ENGINE_BUILDERS`, `rlvr eval` and `rlvr serve` from `SERVING_ENGINES`.

The combinations no builder honours (vLLM on Ray, LoRA ranks or targets vLLM does not take, vLLM's truncated top-p
log-probs without a mismatch correction) are refused at load by config/coherence_run.py, so each
builder here only builds.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Callable

from transformers import PreTrainedModel

from rlvr import names
from rlvr.config import Config
from rlvr.engines import Engine, HFEngine
from rlvr.train.lora import engine_copy, engine_model, engine_view, engine_weights

Builder = Callable[[Config, PreTrainedModel, object, Path], Engine]


def _vllm(config: Config, model: PreTrainedModel, tokenizer, model_path: Path) -> Engine:
    from rlvr.engines.vllm_engine import VLLMSettings, build_vllm_engine
    from rlvr.engines.vllm_lora import VLLMLora

    m = config.model
    lora = VLLMLora(m.lora_rank, m.lora_alpha, tuple(m.lora_targets)) if m.lora_rank else None
    engine = build_vllm_engine(str(model_path), tokenizer, seed=config.run.seed,
                               context=getattr(model.config, "max_position_embeddings", None),
                               weight_keys=engine_weights(model).keys() if lora else model.state_dict().keys(),
                               settings=VLLMSettings.from_section(m.vllm, m.dtype), lora=lora)
    if lora:  # vLLM starts on the base folder: the policy's adapters (a resumed run's) go in now
        engine.load_weights(engine_weights(model), version=0)
    return engine


def _hf_local(config: Config, model: PreTrainedModel, tokenizer, model_path: Path) -> Engine:
    sampled = engine_copy(model) if needs_copy(config) else engine_view(model)
    if config.orchestrate.rollout_workers > 1:  # local processes over the same (shared) weights
        from rlvr.engines.local_pool import LocalPoolEngine

        return LocalPoolEngine(sampled, tokenizer, workers=config.orchestrate.rollout_workers, seed=config.run.seed)
    return HFEngine(sampled, tokenizer, seed=config.run.seed)


def needs_copy(config: Config) -> bool:
    """Whether the in-process engine needs weights of its own. A sync run generates and trains
    in turn, so the engine can sample with the trainer's model itself: no second copy in
    memory and no copy per step. An async run trains while it generates (the engine must not
    see a half-applied step); FSDP shards the trainer's model and gradient checkpointing
    wraps its layers, so those keep a copy made before either."""
    t = config.train
    return config.orchestrate.mode != "sync" or t.fsdp or t.gradient_checkpointing


def _hf_ray(config: Config, model: PreTrainedModel, tokenizer, model_path: Path) -> Engine:
    from rlvr.engines.ray_engine import RayEngine

    m, o = config.model, config.orchestrate
    prepare = functools.partial(engine_model, settings=m, base_path=str(model_path),
                                seed=config.run.seed) if m.lora_rank else None
    return RayEngine(str(model_path), tokenizer, dtype=m.dtype, fp32_head=m.fp32_head,
                     workers=o.rollout_workers, address=o.ray_address, seed=config.run.seed,
                     prepare_model=prepare, chunk_timeout_s=config.run.stall_timeout_s)


HF_BACKENDS: dict[str, Builder] = names.ORCHESTRATE_BACKEND.bind({"local": _hf_local, "ray": _hf_ray},
                                                                 table="HF_BACKENDS")
ENGINE_BUILDERS: dict[str, Builder] = names.ENGINE.bind({
    "hf": lambda config, *rest: HF_BACKENDS[config.orchestrate.backend](config, *rest),
    "vllm": _vllm,
}, table="ENGINE_BUILDERS")




def _hf_in_place(config: Config, model: PreTrainedModel, tokenizer, model_path: Path) -> Engine:
    return HFEngine(model, tokenizer, seed=config.run.seed)


# What `rlvr eval` and `rlvr serve` generate with (orchestrate/model_parts.py): the model itself,
# nothing trains it, so the in-process engine takes no copy and no Ray actors. A new engine
# needs an entry here too (`bind` refuses a table that misses a name), so it serves every command.
SERVING_ENGINES: dict[str, Builder] = names.ENGINE.bind({"hf": _hf_in_place, "vllm": _vllm},
                                                         table="SERVING_ENGINES")


def make_engine(config: Config, model: PreTrainedModel, tokenizer, model_path: Path) -> Engine:
    """The engine `model.engine` and `orchestrate.backend` choose; in process, `needs_copy` says
    whether it samples with weights of its own."""
    return ENGINE_BUILDERS[config.model.engine](config, model, tokenizer, model_path)
