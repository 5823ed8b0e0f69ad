"""Start or resume a run in its folder; what `rlvr train` and `rlvr demo` call."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from transformers.utils import logging as hf_logging

from rlvr.config import Config, dump_config, load_config
from rlvr.errors import ConfigError
from rlvr.orchestrate.components import build
from rlvr.orchestrate.progress import ProgressDisplay
from rlvr.orchestrate.reward_curve import plot_reward_curve
from rlvr.orchestrate.run_folder import RunFolder, SilentRunFolder
from rlvr.orchestrate.async_loop import AsyncLoop
from rlvr.orchestrate.sync import SyncLoop
from rlvr.train.checkpoint import list_checkpoints
from rlvr.train.distributed import join_process_group


def repo_root() -> Path:
    """The checkout rlvr runs from: recipes/ and models/ are found there."""
    return Path(__file__).resolve().parents[3]


@dataclass
class RunResult:
    folder: RunFolder
    steps: int
    train_seconds: float
    accuracy_before: float | None = None
    accuracy_after: float | None = None


def new_run_folder(config: Config) -> RunFolder:
    folder = RunFolder(Path(config.run.output_dir) / config.run.name)
    if folder.metrics.exists() or folder.checkpoints.exists():
        raise ConfigError(f"{folder.path} already holds a run: resume it with "
                          f"`rlvr train --resume {folder.path}` or pick another --set run.name=...")
    folder.create(dump_config(config))
    return folder


def open_loop(config: Config, folder: RunFolder, resume: bool) -> SyncLoop:
    found = list_checkpoints(folder.checkpoints) if resume else []
    parts = build(config, repo_root(), weights_from=found[-1] if found else None)
    loop = (AsyncLoop if config.orchestrate.mode == "async" else SyncLoop)(config, parts, folder)
    if resume:
        loop.resume_from_latest()
    return loop


def train(config: Config, *, resume_dir: Path | None = None, eval_full: bool = False) -> RunResult:
    """Run (or continue) training to `train.steps`; with `eval_full`, measure greedy accuracy
    on the whole test split before and after. Under `train.fsdp` every rank runs this; rank 0
    alone writes the run folder and prints."""
    ranks = join_process_group(config)
    writer = RunFolder if ranks is None or ranks.is_main else SilentRunFolder
    if resume_dir is not None:
        folder = writer(resume_dir)
        if not folder.config.is_file():
            raise ConfigError(f"{resume_dir}: no config.toml here, so there is no run to resume")
    else:
        folder = new_run_folder(config) if writer is RunFolder else writer(Path(config.run.output_dir) / config.run.name)
    hf_logging.disable_progress_bar()  # a bar for every checkpoint save would bury ours
    loop = open_loop(config, folder, resume=resume_dir is not None)
    display = ProgressDisplay(config.train.steps, config.log.progress if folder.writes else "none",
                              first_step=loop.step + 1)
    result = RunResult(folder=folder, steps=loop.step, train_seconds=0.0)
    if eval_full:
        result.accuracy_before = loop.evaluate(size=len(loop.parts.test_set))
        display.note(f"held-out greedy accuracy before training: {result.accuracy_before:.1%}")
        display.last_eval = result.accuracy_before
    try:
        loop.run(display)
    finally:
        display.close()
    if eval_full:
        result.accuracy_after = loop.evaluate(size=len(loop.parts.test_set))
    result.steps, result.train_seconds = loop.step, loop.elapsed
    if folder.writes:
        plot_reward_curve(folder.read_metrics(), folder.reward_curve, accuracy_before=result.accuracy_before)
    return result


def resume(run_dir: Path, overrides: list[str] = ()) -> RunResult:
    folder = RunFolder(run_dir)
    if not folder.config.is_file():
        raise ConfigError(f"{run_dir}: no config.toml here, so there is no run to resume")
    config = load_config(folder.config, list(overrides))
    return train(config, resume_dir=run_dir)


def timestamp() -> str:
    return time.strftime("%Y%m%d-%H%M%S")
