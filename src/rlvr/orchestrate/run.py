"""Start or resume a run in its folder; what `rlvr train` and `rlvr demo` call."""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from transformers.utils import logging as hf_logging

from rlvr.config import Config, dump_config, load_config
from rlvr.errors import ConfigError
from rlvr.orchestrate.components import build, resolve_path
from rlvr.orchestrate.data_fingerprint import check_same_data, fingerprint
from rlvr.orchestrate.data_fingerprint import record as record_data
from rlvr.orchestrate.progress import ProgressDisplay
from rlvr.orchestrate.reward_curve import plot_reward_curve
from rlvr.orchestrate.run_folder import RunFolder, RunInterrupted, SilentRunFolder
from rlvr.orchestrate.stop_signals import stop_after_the_step
from rlvr.orchestrate.scoring import RewardFn
from rlvr.orchestrate.loop import Loop
from rlvr.orchestrate.plan import plan_run
from rlvr.train.checkpoint import clean_temporaries, newest_intact
from rlvr.train.distributed import join_process_group

log = logging.getLogger(__name__)


StepCallback = Callable[[int, dict[str, float]], None]


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
    notes: list[str] = field(default_factory=list)  # what resume repaired (damaged checkpoints, debris)


def new_run_folder(config: Config) -> RunFolder:
    """Take runs/<name>/ for a new run and write its config.toml, with the folder's lock held
    for the life of the process."""
    folder = RunFolder(Path(config.run.output_dir) / config.run.name)
    claim(folder)
    folder.create(dump_config(config))
    return folder


def claim(folder: RunFolder) -> None:
    """Take the folder's lock, refused in one line when another process trains there or the
    folder already holds a run. The check runs under the lock, so of two same-name runs
    started together exactly one passes it."""
    folder.acquire()
    if folder.holds_a_run():
        folder.release()
        raise ConfigError(f"{folder.path} already holds a run: resume it with "
                          f"`rlvr train --resume {folder.path}` or pick another --set run.name=...")


def open_loop(config: Config, folder: RunFolder, resume: bool, checkpoint: Path | None = None,
              reward_fn: RewardFn | None = None, accept_data_change: bool = False) -> Loop:
    """The loop of a run whose folder is taken; on resume, from `checkpoint` (None: start over),
    refused when the data differs from the run's data.json (unless `accept_data_change`)."""
    plan = plan_run(config)
    loop = Loop(plan, build(plan, repo_root(), weights_from=checkpoint, reward_fn=reward_fn), folder)
    if resume:
        step = int(checkpoint.name.removeprefix("step_")) if checkpoint is not None else 0
        data_notes = check_same_data(folder, run_data(config, loop.parts), config.task, step, accept_data_change)
        loop.resume_from(checkpoint)
        loop.resume_notes[:0] = data_notes
    return loop


def run_data(config: Config, parts) -> dict:
    """The fingerprint of the rows this run reads (orchestrate/data_fingerprint.py)."""
    return fingerprint(config.task, parts.train_set, parts.test_set, lambda path: resolve_path(path, repo_root()))


def repair_for_resume(folder: RunFolder) -> tuple[Path | None, list[str]]:
    """With the lock held (no live process writes here): delete what killed saves and rewrites
    left, and pick the newest intact checkpoint. Returns it and a line for each repair. Refused
    when checkpoints/ is not a folder, or when the checkpoints the run wrote are gone (starting
    over would overwrite the run's curve)."""
    notes = []
    if folder.writes:
        removed = (clean_temporaries(folder.checkpoints) + clean_temporaries(folder.path / "best_checkpoint")
                   + folder.remove_partials())
        if removed:
            notes.append(f"removed what killed saves left in {folder.path}: {', '.join(removed)}")
    if folder.checkpoints.exists() and not folder.checkpoints.is_dir():
        raise ConfigError(f"{folder.checkpoints}: not a folder (the run's checkpoints belong there); move it "
                          f"away, then resume")
    recorded = folder.recorded_checkpoint()
    missing = recorded and not (folder.checkpoints / f"step_{recorded}").is_dir()  # not there, damaged or not
    checkpoint, damaged = newest_intact(folder.checkpoints, move_damaged=folder.writes)
    if checkpoint is None and missing:
        missing = folder.checkpoints / f"step_{recorded}"
        gone = "is missing" if folder.checkpoints.is_dir() else f"is missing ({folder.checkpoints} itself is gone)"
        raise ConfigError(f"{missing}: the newest checkpoint this run wrote {gone}, and no other is there: "
                          f"resuming would start over and overwrite {folder.metrics.name}; put the checkpoints "
                          f"back, or start a new run under another name")
    if checkpoint is not None and missing:
        notes.append(f"{folder.checkpoints / f'step_{recorded}'}: the newest checkpoint this run wrote is "
                     f"missing; resuming from {checkpoint.name}")
    return checkpoint, notes + damaged


def start(config: Config, folder_class, resume_dir: Path | None, reward_fn: RewardFn | None = None,
          accept_data_change: bool = False) -> tuple[RunFolder, Loop, list[str]]:
    """Take the run folder and build the loop. A new run validates everything (model, data,
    reward: `build`) before its folder exists, so that a failed start leaves nothing behind."""
    if resume_dir is not None:
        folder = folder_class(resume_dir)
        if not folder.config.is_file():
            raise ConfigError(f"{resume_dir}: no config.toml here, so there is no run to resume")
        folder.acquire()  # refuses the resume of a run that is still training
        try:
            checkpoint, notes = repair_for_resume(folder)
            loop = open_loop(config, folder, resume=True, checkpoint=checkpoint, reward_fn=reward_fn,
                             accept_data_change=accept_data_change)
            return folder, loop, notes + loop.resume_notes
        except BaseException:
            folder.release()
            raise
    plan = plan_run(config)
    folder = folder_class(Path(config.run.output_dir) / config.run.name)
    if folder.writes and folder.path.exists():  # refuse a taken name before the slow build
        claim(folder)
        folder.release()
    parts = build(plan, repo_root(), reward_fn=reward_fn)
    if folder.writes:
        folder = new_run_folder(config)
        record_data(folder, run_data(config, parts))
    try:
        return folder, Loop(plan, parts, folder), []
    except BaseException:  # the lock is per open file: a leaked one refuses this process's resume
        folder.release()
        raise


def close_engine(engine) -> None:
    """`engine.close()`, whose failure (an engine core already gone) is logged, not raised over
    the run's own result or error."""
    try:
        engine.close()
    except Exception as e:  # noqa: BLE001 - the run has ended either way
        log.warning("closing the %s at the end of the run failed: %s", type(engine).__name__, e)


def train(config: Config, *, resume_dir: Path | None = None, eval_full: bool = False,
          reward_fn: RewardFn | None = None, on_step: StepCallback | None = None,
          accept_data_change: bool = False) -> RunResult:
    """Run (or continue) training to `train.steps`; with `eval_full`, measure greedy accuracy
    on the whole test split before and after. Under `train.fsdp` every rank runs this; rank 0
    alone writes the run folder and prints. `reward_fn` (a Python callable) replaces the
    config's reward; `on_step(step, metrics)` is called after each step's metrics line. A
    resume on data other than the run's (runs/NAME/data.json) is refused unless
    `accept_data_change`, which is recorded there."""
    ranks = join_process_group(config)
    hf_logging.disable_progress_bar()  # a bar for every checkpoint save would bury ours
    folder_class = RunFolder if ranks is None or ranks.is_main else SilentRunFolder
    folder, loop, notes = start(config, folder_class, resume_dir, reward_fn, accept_data_change)
    try:
        return run_loop(config, folder, loop, notes, eval_full, fsdp=ranks is not None, on_step=on_step)
    finally:
        close_engine(loop.parts.engine)  # its worker processes go with the run, not at this process's exit
        folder.release()


class CallbackDisplay(ProgressDisplay):
    """The progress display that also hands each step's metrics to callbacks (the Python API's
    `on_step`, the W&B writer), and closes those that need it when the run ends."""

    def __init__(self, *args, on_step: list[StepCallback], closing: list[Callable[[], None]], **kwargs):
        super().__init__(*args, **kwargs)
        self.on_step, self.closing = on_step, closing

    def update(self, step: int, metrics: dict[str, float]) -> None:
        super().update(step, metrics)
        for callback in self.on_step:
            callback(step, dict(metrics))

    def close(self) -> None:
        super().close()
        for close in self.closing:
            close()


def make_display(config: Config, folder: RunFolder, first_step: int,
                 on_step: StepCallback | None) -> ProgressDisplay:
    mode = config.log.progress if folder.writes else "none"
    callbacks, closing = [on_step] if on_step is not None else [], []
    if config.log.wandb and folder.writes:
        from rlvr.orchestrate.wandb_log import WandbLog  # an optional extra

        board = WandbLog(config, folder.path)
        callbacks.append(board)
        closing.append(board.close)
    if not callbacks:
        return ProgressDisplay(config.train.steps, mode, first_step=first_step)
    return CallbackDisplay(config.train.steps, mode, first_step=first_step, on_step=callbacks, closing=closing)


def run_loop(config: Config, folder: RunFolder, loop: Loop, notes: list[str], eval_full: bool,
             fsdp: bool, on_step: StepCallback | None = None) -> RunResult:
    display = make_display(config, folder, loop.step + 1, on_step)
    result = RunResult(folder=folder, steps=loop.step, train_seconds=0.0, notes=notes)
    for note in result.notes if folder.writes else []:
        print(f"rlvr: {note}", file=sys.stderr)
    if eval_full:
        result.accuracy_before = loop.evaluate(size=len(loop.parts.test_set))
        display.note(f"held-out greedy accuracy before training: {result.accuracy_before:.1%}")
        display.last_eval = result.accuracy_before
    try:
        with stop_after_the_step(loop, config.run.sigterm_grace_s, enabled=not fsdp) as request:
            loop.run(display)
    except KeyboardInterrupt:  # a second Ctrl-C / SIGTERM, or past the grace period: stop now
        raise RunInterrupted(interrupted_message(loop, folder, request), request.exit_status) from None
    finally:
        display.close()
    if loop.stop_requested:
        raise RunInterrupted(f"{stopped_word(request)} after step {loop.step} (checkpoint written); resume with "
                             f"`rlvr train --resume {folder.path}`", request.exit_status)
    if eval_full:
        result.accuracy_after = loop.evaluate(size=len(loop.parts.test_set))
    result.steps, result.train_seconds = loop.step, loop.state.elapsed
    if folder.writes:
        plot_reward_curve(folder.read_metrics(), folder.reward_curve, accuracy_before=result.accuracy_before)
    return result


def stopped_word(request) -> str:
    return "terminated (SIGTERM)" if request.signal_name == "SIGTERM" else "interrupted"


def interrupted_message(loop: Loop, folder: RunFolder, request) -> str:
    """What a stop at once interrupted (`loop.doing`), and the checkpoint a resume starts from."""
    late = f", {request.grace_s:g} s after SIGTERM (run.sigterm_grace_s)" if request.deadline_passed else ""
    last = loop.schedule.last_step
    since = f"from step {last}, the last checkpoint" if last else "from the start: no checkpoint yet"
    return (f"{stopped_word(request)} during {loop.doing}{late}; resume with `rlvr train --resume "
            f"{folder.path}` ({since})")


def resume(run_dir: Path, overrides: list[str] = (), **kwargs) -> RunResult:
    """Continue the run in `run_dir` (its config.toml, with `overrides`); `kwargs` as `train`'s."""
    folder = RunFolder(run_dir)
    if not folder.config.is_file():
        raise ConfigError(f"{run_dir}: no config.toml here, so there is no run to resume")
    config = load_config(folder.config, list(overrides))
    return train(config, resume_dir=run_dir, **kwargs)

