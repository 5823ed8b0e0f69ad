"""Load a causal LM and its tokenizer from a local folder, with errors a user can act on."""

from __future__ import annotations

from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open
from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase

from rlvr import names
from rlvr.errors import ModelLoadError
from rlvr.models.finite import all_finite, first_nonfinite
from rlvr.models.precision import use_fp32_head

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json")
DTYPES = names.DTYPE.bind({"float32": torch.float32, "bfloat16": torch.bfloat16}, table="DTYPES")


def load_model(path: str | Path, dtype: str = "float32", fp32_head: bool = True) -> PreTrainedModel:
    """The model in `dtype`; with `fp32_head` (and a dtype below float32) its LM head computes
    in float32 (`rlvr.models.precision`)."""
    path = Path(path)
    _check_folder(path)
    _check_safetensors(path)
    try:
        model = AutoModelForCausalLM.from_pretrained(path, dtype=DTYPES[dtype])
    except (OSError, ValueError, KeyError, RuntimeError, SafetensorError) as e:
        raise ModelLoadError(f"{path}: cannot load the model ({_first_line(e)})") from None
    bad = first_nonfinite(model.named_parameters()) if not all_finite(model.parameters()) else None
    if bad is not None:
        raise ModelLoadError(f"{path}: weight {bad[0]} is not finite ({bad[1]}); the checkpoint is corrupt")
    if fp32_head and DTYPES[dtype] != torch.float32:
        use_fp32_head(model)
    return model


def _first_line(e: Exception) -> str:
    return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__


def _check_safetensors(path: Path) -> None:
    """Read each weights file's header (cheap: the tensors are mapped, not read): a truncated or
    corrupt file is named here instead of failing inside transformers."""
    for file in sorted(path.glob("*.safetensors")):
        try:
            with safe_open(file, framework="pt"):
                pass
        except (SafetensorError, OSError) as e:
            raise ModelLoadError(f"{file}: corrupt or truncated safetensors file ({_first_line(e)})") from None


def resolve_device(spec: str) -> torch.device:
    """`model.device` → a torch device: "auto" is cuda when torch sees a GPU, else cpu."""
    if spec == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if spec.startswith("cuda") and not torch.cuda.is_available():
        raise ModelLoadError(f"model.device = {spec!r}, but torch sees no CUDA GPU "
                             f"(torch {torch.__version__}); use 'cpu' or 'auto'")
    return torch.device(spec)


def load_tokenizer(path: str | Path) -> PreTrainedTokenizerBase:
    path = Path(path)
    if not path.is_dir():  # else transformers takes the path for a hub repo id
        raise ModelLoadError(f"{path}: model folder not found")
    if not any((path / f).is_file() for f in TOKENIZER_FILES):
        raise ModelLoadError(f"{path}: no tokenizer files ({', '.join(TOKENIZER_FILES)})")
    try:
        tok = AutoTokenizer.from_pretrained(path)
    except (OSError, ValueError, KeyError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ModelLoadError(f"{path}: cannot load the tokenizer ({first})") from None
    if tok.eos_token_id is None:
        raise ModelLoadError(f"{path}: the tokenizer has no EOS token")
    tok.padding_side = "left"
    return tok


def _check_folder(path: Path) -> None:
    if not path.is_dir():
        raise ModelLoadError(f"{path}: model folder not found")
    if not (path / "config.json").is_file():
        raise ModelLoadError(f"{path}: no config.json (is this a Hugging Face model folder?)")
    if not any(path.glob("*.safetensors")) and not any(path.glob("*.bin")):
        raise ModelLoadError(f"{path}: no weights (*.safetensors or *.bin)")


def pad_token_id(tokenizer: PreTrainedTokenizerBase) -> int:
    """The padding id; EOS when the tokenizer has no pad token (the mask, not the id, tells)."""
    return tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
