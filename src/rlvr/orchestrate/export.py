"""A checkpoint as a plain Hugging Face model folder (`rlvr export`, `rlvr.export`): the weights
(`save_pretrained`, safetensors; a LoRA checkpoint's adapters merged into its base), the
tokenizer with the run's chat template, and nothing of rlvr's (no state.pt, no manifest), so
that `transformers.AutoModelForCausalLM.from_pretrained` and vLLM load it without rlvr.

The tokenizer is the run's: `model.path` (and `model.chat_template`) of the config.toml in the
run folder holding the checkpoint, or the folder given as `tokenizer`.
"""

from __future__ import annotations

from pathlib import Path

from rlvr.config import Config, load_config
from rlvr.config.sft_schema import run_schema
from rlvr.engines.loading import load_model, load_tokenizer
from rlvr.errors import ConfigError
from rlvr.orchestrate.paths import resolve_path
from rlvr.orchestrate.run import repo_root
from rlvr.tasks.chat import with_chat_template
from rlvr.train.checkpoint import newest_intact, verify_checkpoint
from rlvr.train.lora import is_adapter_checkpoint, load_merged


def checkpoint_of(path: Path) -> Path:
    """`path` itself when it is a checkpoint (verified), or the newest intact checkpoint of the
    run folder (or `checkpoints/` folder) it names."""
    if (path / "config.toml").is_file():
        path = path / "checkpoints"
    if path.name in ("checkpoints", "best_checkpoint") and path.is_dir():
        found, _ = newest_intact(path, move_damaged=False)
        if found is None:
            raise ConfigError(f"{path}: no checkpoint here yet")
        return found
    if not (path / "state.pt").is_file():
        raise ConfigError(f"{path}: not an rlvr checkpoint (no state.pt) nor a run folder (no config.toml)")
    problem = verify_checkpoint(path)
    if problem is not None:
        raise ConfigError(f"{path}: damaged checkpoint: {problem}")
    return path


def run_config(checkpoint: Path) -> Config | None:
    """The config.toml of the run folder holding `checkpoint` (…/checkpoints/step_N), if any."""
    saved = checkpoint.resolve().parent.parent / "config.toml"
    return load_config(saved, schema=run_schema(saved)) if saved.is_file() else None


def export_checkpoint(source: str | Path, out: str | Path, tokenizer: str | Path | None = None) -> Path:
    """Write the plain model folder `out` (refused when it exists and is not empty) from a
    checkpoint or a run folder; returns `out`."""
    checkpoint, out = checkpoint_of(Path(source)), Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ConfigError(f"{out}: already exists and is not an empty folder; export into a new one")
    config = run_config(checkpoint)
    if config is None and tokenizer is None:
        raise ConfigError(f"{checkpoint}: not inside a run folder with a config.toml, so its tokenizer is "
                          "unknown; give the tokenizer's folder (--tokenizer DIR)")
    base = repo_root()
    dtype = config.model.dtype if config is not None else "float32"
    tok = load_tokenizer(resolve_path(str(tokenizer), base) if tokenizer else resolve_path(config.model.path, base))
    if config is not None:
        tok = with_chat_template(tok, config.model.chat_template, base)
    read = lambda folder: load_model(folder, dtype, fp32_head=False)  # noqa: E731 (the plain model)
    model = load_merged(checkpoint, read) if is_adapter_checkpoint(checkpoint) else read(checkpoint)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    tok.save_pretrained(out)
    return out
