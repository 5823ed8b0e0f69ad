"""A model folder made ready to generate from a run plan: what `rlvr eval` and `rlvr serve`
build, from the same plan and tables as `rlvr train` (orchestrate/components.py), so that a
recipe's `model.engine`, chat template and reward serve every command.

The plan's recipe gives the engine (`SERVING_ENGINES[plan.engine]`, seeded by `run.seed`), the
tokenizer's chat template and the reward; the model is the folder given, not `model.path`
(a checkpoint of a LoRA run holds adapters only: it is merged into the base it names).
"""

from __future__ import annotations

from pathlib import Path

from rlvr.engines.loading import load_model, load_tokenizer
from rlvr.orchestrate.components import judge_path_resolved
from rlvr.orchestrate.engine_choice import SERVING_ENGINES
from rlvr.orchestrate.parts import ModelParts
from rlvr.orchestrate.plan import RunPlan
from rlvr.orchestrate.scoring import build_reward_fn
from rlvr.tasks.chat import with_chat_template
from rlvr.train.lora import is_adapter_checkpoint, load_merged


def load_model_parts(plan: RunPlan, model_path: str | Path, base: Path, *, tokenizer_dir: str | Path | None = None,
                     with_reward: bool = True) -> ModelParts:
    """The model at `model_path` in the plan's engine, its tokenizer (from `tokenizer_dir`, else
    the model folder) with the plan's chat template, and (`with_reward`) the plan's reward
    scoring with this model; else `reward_fn` is None (the caller scores by its own rule).
    `base`: where a recipe's relative paths are read from (the repository)."""
    config, path = plan.config, Path(model_path)
    tokenizer = with_chat_template(load_tokenizer(tokenizer_dir or path), config.model.chat_template, base)
    model = load_merged(path, load_model) if is_adapter_checkpoint(path) else load_model(path)
    engine = SERVING_ENGINES[plan.engine](config, model, tokenizer, path)
    reward_fn = build_reward_fn(judge_path_resolved(config.reward, base), (model, tokenizer)) if with_reward else None
    return ModelParts(model=model, tokenizer=tokenizer, engine=engine, reward_fn=reward_fn)
