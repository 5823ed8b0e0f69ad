"""The validated configuration of `rlvr sft`: supervised fine-tuning as a stage of its own.

It keeps `rlvr train`'s conventions: a TOML recipe (recipes/sft/*.toml), `--set`, the same
[run] and [checkpoint] sections, the same learning-rate schedule and master weights. Only what
differs is new: [data] (the rows and how they become token sequences) and [train] (a plain
cross-entropy step has no rollouts, groups or objective).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal, Optional

from pydantic import Field, model_validator

from rlvr import names
from rlvr.config.schema import Beta, CheckpointSection, RunSection
from rlvr.config.section import Section


class SFTModelSection(Section):
    path: str = "models/tiny-arith"  # any Hugging Face causal LM folder
    tokenizer: Optional[str] = None  # a tokenizer folder; default: the model's
    dtype: names.DTYPE.literal() = "float32"
    master_weights: names.MASTER_WEIGHTS.literal() = "fp32"  # with bfloat16: an fp32 copy takes the updates
    chat_template: str = Field("auto", min_length=1)  # "auto" (the tokenizer's), "none", or a jinja file


class SFTDataSection(Section):
    """Rows are `{"messages": [...]}` (chat, rendered with the chat template; the loss is on
    assistant turns only) or `{"prompt": ..., "completion": ...}` (the loss is on the completion
    and the EOS after it). Files: .jsonl/.json/.parquet/.arrow/.csv read by `datasets`."""

    train_path: str = Field(min_length=1)  # required: the training rows
    test_path: Optional[str] = None  # held-out rows: `sft/test_loss` at every eval
    max_length: int = Field(512, ge=2, le=1 << 20)  # tokens per example (per packed row with packing)
    overlong: Literal["truncate", "drop", "fail"] = "truncate"  # an example longer than max_length
    no_assistant: Literal["skip", "fail"] = "skip"  # a chat row with no assistant turn
    packing: bool = False  # several examples per row, attention kept inside each example
    seed: int = Field(0, ge=0, le=2**63 - 1)  # the order examples are drawn in (an epoch is a permutation)


class SFTTrainSection(Section):
    steps: int = Field(100, ge=1, le=10_000_000)
    batch_size: int = Field(16, ge=1, le=65_536)  # examples (or packed rows) per optimiser step
    micro_batch_size: int = Field(16, ge=1, le=65_536)  # rows per forward; the loss is exact under splitting
    lr: float = Field(1e-4, gt=0, le=1)
    betas: tuple[Beta, Beta] = (0.9, 0.999)
    weight_decay: float = Field(0.0, ge=0, le=1)
    max_grad_norm: float = Field(1.0, gt=0, le=1e6)
    lr_schedule: names.LR_SCHEDULE.literal() = "constant"
    warmup_steps: int = Field(0, ge=0, le=10_000_000)
    warmup_ratio: Optional[float] = Field(None, ge=0, lt=1)
    min_lr_ratio: float = Field(0.0, ge=0, le=1)
    updates_per_batch: Literal[1] = 1  # the schedule's update count is train.steps (one update a step)


class SFTEvalSection(Section):
    every: int = Field(50, ge=0, le=10_000_000)  # steps between test-loss evaluations; 0: only at the end


class SFTConfig(Section):
    run: RunSection = RunSection(name="sft")
    model: SFTModelSection = SFTModelSection()
    data: SFTDataSection  # required: there is no default data
    train: SFTTrainSection = SFTTrainSection()
    eval: SFTEvalSection = SFTEvalSection()
    checkpoint: CheckpointSection = CheckpointSection()

    @model_validator(mode="after")
    def _micro_divides(self) -> "SFTConfig":
        if self.train.batch_size % min(self.train.micro_batch_size, self.train.batch_size):
            raise ValueError(f"train.batch_size = {self.train.batch_size} is not a multiple of "
                             f"train.micro_batch_size = {self.train.micro_batch_size}")
        return self


def run_schema(config_toml: Path) -> type[Section]:
    """The schema of a run folder's config.toml: an `rlvr sft` run's has a [data] section, an
    `rlvr train` run's has none (its data is [task])."""
    from rlvr.config.schema import Config

    try:
        text = config_toml.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return Config  # load_config reports the problem with the file's name
    return SFTConfig if re.search(r"^\[data\]", text, re.M) else Config
