"""LoRA through peft: wrap the policy, pick the weights that travel to the engine, load and
evaluate adapter checkpoints.

With `model.lora_rank = r > 0` every module named in `model.lora_targets` gets a rank-r
adapter, W x + (alpha / r) B A x (Hu et al. 2021, arXiv:2106.09685); only A and B train, the
base weights stay frozen and bit-identical for the whole run. That gives three shortcuts:

- the rollout engine holds the same wrapped model, so a weight sync sends the adapters only;
- the KL reference model is the policy with its adapters switched off (no second copy);
- a checkpoint holds the adapters only (peft's folder format: `adapter_config.json` +
  `adapter_model.safetensors`), and names its base model by absolute path.

Key naming of what travels to the engine (`engine_weights`): the names inside the
transformers model, with peft's layer parts inserted, i.e. exactly the keys of
`PeftModel.get_base_model().state_dict()`:
    model.layers.0.self_attn.q_proj.lora_A.default.weight   (r, in_features)
    model.layers.0.self_attn.q_proj.lora_B.default.weight   (out_features, r)
The engine holds that inner transformers model (`engine_copy`), so the keys match its own.
"""

from __future__ import annotations

import copy
import json
import warnings
from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn
from transformers import PreTrainedModel

from rlvr.config.schema import ModelSection
from rlvr.errors import ConfigError, ModelLoadError

ADAPTER_CONFIG = "adapter_config.json"


def _peft():
    try:
        import peft
    except ImportError:
        raise ConfigError("model.lora_rank > 0 needs peft: pip install 'rlvr[lora]'") from None
    return peft


def is_lora(model: nn.Module) -> bool:
    try:
        from peft import PeftModel
    except ImportError:
        return False
    return isinstance(model, PeftModel)


def wrap_lora(model: PreTrainedModel, settings: ModelSection, base_path: Path, *, seed: int):
    """The policy with fresh LoRA adapters on `settings.lora_targets`; only they train.

    A is initialised from `seed` alone (so every process that wraps the same base gets the
    same adapters, Ray workers included); B starts at zero, so the wrapped model computes
    exactly the base model until the first step."""
    peft = _peft()
    lora = peft.LoraConfig(r=settings.lora_rank, lora_alpha=settings.lora_alpha, lora_dropout=settings.lora_dropout,
                           target_modules=list(settings.lora_targets))
    with torch.random.fork_rng(devices=[]), warnings.catch_warnings():
        torch.manual_seed(seed)
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*", category=FutureWarning)
        try:
            policy = peft.get_peft_model(model, lora)
        except ValueError as e:  # peft's "Target modules {...} not found in the base model"
            raise ConfigError(f"model.lora_targets = {list(settings.lora_targets)}: {str(e).splitlines()[0]}") from None
    # Absolute, so that a checkpoint can be evaluated from any working directory (load_merged);
    # set after wrapping because peft overwrites it with the path the model was loaded from.
    policy.peft_config["default"].base_model_name_or_path = str(Path(base_path).resolve())
    return policy


def engine_weights(model: nn.Module) -> dict[str, torch.Tensor]:
    """What a weight sync sends: the full state dict for a plain model; for a LoRA policy only
    its trainable tensors (the adapters), named as in the module docstring."""
    if not is_lora(model):
        return model.state_dict()
    return {name: p.detach() for name, p in model.get_base_model().named_parameters() if p.requires_grad}


def engine_copy(model: nn.Module) -> PreTrainedModel:
    """The engine's own copy of the policy: for a LoRA policy the transformers model inside
    it, adapters injected, so its keys are those of `engine_weights`."""
    twin = copy.deepcopy(model)
    return twin.get_base_model() if is_lora(twin) else twin


def engine_view(model: nn.Module) -> PreTrainedModel:
    """`engine_copy` without the copy: the policy itself (for a LoRA policy, the transformers
    model inside it), for an engine that samples only while nothing trains (sync runs)."""
    return model.get_base_model() if is_lora(model) else model


def engine_model(model: PreTrainedModel, settings: ModelSection, base_path: str, seed: int) -> PreTrainedModel:
    """For a Ray worker: the base model it loaded, wrapped as the trainer's is, unwrapped as
    `engine_copy` does."""
    return wrap_lora(model, settings, Path(base_path), seed=seed).get_base_model()


class AdaptersOff:
    """The policy with its adapters switched off: the base model, which LoRA training never
    changes, used as the KL reference without a second copy in memory. Called like a model."""

    def __init__(self, policy: nn.Module):
        self.policy = policy

    def parameters(self):
        """The policy's parameters (callers read the device from them)."""
        return self.policy.parameters()

    def __call__(self, **inputs):
        return self.calling(self.policy)(**inputs)

    def calling(self, part):
        """`part` of the policy (its body, its head) called with the adapters off, in eval mode."""

        def call(*args, **inputs):
            was_training = self.policy.training
            self.policy.eval()
            try:
                with self.policy.disable_adapter():
                    return part(*args, **inputs)
            finally:
                self.policy.train(was_training)

        call.__wrapped__ = getattr(part, "forward", part)  # its signature: the trainer's forward paths read it
        return call


def load_adapters(policy: nn.Module, checkpoint: Path) -> None:
    """Load a checkpoint's adapters into a freshly wrapped policy (resume). A checkpoint
    without adapters, or with another rank, alpha or set of targets, is a ConfigError naming
    the folder."""
    peft = _peft()
    saved, own_config = read_adapter_config(checkpoint), policy.peft_config["default"]
    for field, key in (("r", "lora_rank"), ("lora_alpha", "lora_alpha")):
        if saved.get(field) != getattr(own_config, field):
            raise ConfigError(f"{checkpoint}: its adapters have {field} = {saved.get(field)}, "
                              f"but model.{key} = {getattr(own_config, field)}")
    weights = peft.utils.load_peft_weights(str(checkpoint), device="cpu")
    result = peft.set_peft_model_state_dict(policy, weights)
    own = set(engine_weights(policy))
    if result.unexpected_keys or len(weights) != len(own):
        raise ConfigError(f"{checkpoint}: its adapters do not match model.lora_targets "
                          f"({len(weights)} tensors saved, {len(own)} expected)")


def read_adapter_config(checkpoint: Path) -> dict:
    path = Path(checkpoint) / ADAPTER_CONFIG
    if not path.is_file():
        raise ConfigError(f"{checkpoint}: no {ADAPTER_CONFIG}: not a LoRA checkpoint "
                          f"(was this run trained with model.lora_rank = 0?)")
    return json.loads(path.read_text())


def is_adapter_checkpoint(path: Path) -> bool:
    return (Path(path) / ADAPTER_CONFIG).is_file()


def load_merged(checkpoint: Path, load_base: Callable[[str], PreTrainedModel]) -> PreTrainedModel:
    """A LoRA checkpoint as a plain transformers model: the base model it names, with the
    adapters merged into its weights (W + (alpha / r) B A), for evaluation. `load_base` reads
    a model folder (`rlvr.engines.loading.load_model`): the caller passes it, as train sits
    below the engines and does not import them."""
    peft = _peft()
    base_path = read_adapter_config(checkpoint).get("base_model_name_or_path")
    if not base_path or not Path(base_path).is_dir():
        raise ModelLoadError(f"{checkpoint}: its base model {base_path!r} (adapter_config.json, "
                             f"base_model_name_or_path) is not a folder here")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*", category=FutureWarning)
        policy = peft.PeftModel.from_pretrained(load_base(base_path), str(checkpoint))
    return policy.merge_and_unload().eval()
