"""`rlvr sft`: supervised fine-tuning as a stage with `rlvr train`'s conventions.

The run folder is the same (config.toml, metrics.jsonl, checkpoints/step_N/ as plain Hugging
Face folders with the tokenizer, a lock against a second writer), and so are the optimiser
step (rlvr.train.trainer: clipping, AdamW, the LR schedule, fp32 master weights, the checks for
non-finite values), the checkpoint writer and the Ctrl-C rule. A step:

    loss = sum over trained tokens of -log p(token | its example's earlier tokens)
           / number of trained tokens in the batch          (token mean over the whole batch)

split into micro-batches whose sums add up to exactly that (each micro-batch's sum is divided
by the batch's count, not its own). Resume restores weights, optimiser, schedule, RNG and the
data position, so a resumed run draws the batches the uninterrupted one would have.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import torch

from rlvr.config.load import dump_config, load_config
from rlvr.config.sft_schema import SFTConfig
from rlvr.engines.loading import load_model, load_tokenizer, pad_token_id
from rlvr.errors import ConfigError
from rlvr.orchestrate.paths import resolve_path
from rlvr.orchestrate.run import claim, repair_for_resume, repo_root
from rlvr.orchestrate.stop_signals import stop_after_the_step
from rlvr.orchestrate.run_folder import RunFolder, RunInterrupted
from rlvr.tasks.chat import with_chat_template
from rlvr.tasks.sft_rows import SFTCounts, load_examples
from rlvr.train.checkpoint import CheckpointSchedule, load_state, save_checkpoint
from rlvr.train.schedule import ScheduleConfig
from rlvr.train.sft_batches import ExampleOrder, Row, collate, next_batch, token_loss_sum
from rlvr.train.trainer import OptimConfig, Trainer


@dataclass
class SFTResult:
    folder: RunFolder
    steps: int
    train_seconds: float
    counts: SFTCounts
    test_loss: float | None


class SFTTrainer(Trainer):
    """The RL trainer's optimiser step (clip, schedule, masters, finite checks) with the
    cross-entropy of a list of micro-batches in place of an objective over rollouts."""

    def accumulate_gradients(self, micro_batches: list[dict[str, torch.Tensor]]) -> dict[str, float]:
        self.model.train()
        self.optimizer.zero_grad(set_to_none=True)
        total = sum(int((m["labels"][:, 1:] != -100).sum()) for m in micro_batches)
        loss_sum, t0 = 0.0, time.perf_counter()
        for micro in micro_batches:
            loss, _ = token_loss_sum(self.model, micro)
            (loss / total).backward()
            loss_sum += float(loss.detach())
        return {"sft/loss": loss_sum / total, "sft/tokens": float(total),
                "time/train_s": time.perf_counter() - t0}


class SFTLoop:
    def __init__(self, config: SFTConfig, folder: RunFolder, checkpoint: Path | None = None):
        self.config, self.folder, self.stop_requested = config, folder, False
        base = repo_root()
        model_path = resolve_path(str(checkpoint or config.model.path), base)
        tokenizer_path = checkpoint or resolve_path(config.model.tokenizer or config.model.path, base)
        self.tokenizer = with_chat_template(load_tokenizer(tokenizer_path), config.model.chat_template, base)
        self.model = load_model(model_path, config.model.dtype)
        self.examples, self.counts = load_examples(resolve_path(config.data.train_path, base), self.tokenizer,
                                                   config.data, config.model.chat_template)
        self.test = (load_examples(resolve_path(config.data.test_path, base), self.tokenizer, config.data,
                                   config.model.chat_template)[0] if config.data.test_path else [])
        train = config.train
        optim = OptimConfig(lr=train.lr, betas=train.betas, weight_decay=train.weight_decay,
                            max_grad_norm=train.max_grad_norm, schedule=ScheduleConfig.from_train(train),
                            master_weights=config.model.master_weights == "fp32")
        self.trainer = SFTTrainer(self.model, None, optim, micro_batch_size=train.micro_batch_size)
        self.order = ExampleOrder(len(self.examples), config.data.seed)
        self.step, self.position = 0, 0
        self.pad = pad_token_id(self.tokenizer)

    def resume_from(self, checkpoint: Path) -> None:
        state = load_state(checkpoint)
        self.trainer.load_optimizer_state(state["optimizer"])
        self.trainer.schedule.load_state_dict(state["schedule"])
        self.step, self.position = state["step"], state["position"]
        if state["examples"] != len(self.examples):
            raise ConfigError(f"{self.folder.path}: the run trained on {state['examples']} examples of "
                              f"{self.config.data.train_path}, which now gives {len(self.examples)}; the data "
                              f"changed since the checkpoint")

    def batches(self) -> tuple[list[dict[str, torch.Tensor]], int]:
        """The next batch's micro-batches and the data position after it."""
        rows, after = next_batch(self.examples, self.order, self.position, self.config.train.batch_size,
                                 self.config.data.max_length, self.config.data.packing)
        size = self.config.train.micro_batch_size
        return [collate(rows[i:i + size], self.pad) for i in range(0, len(rows), size)], after

    def test_loss(self) -> float | None:
        if not self.test:
            return None
        self.model.eval()
        total, count = 0.0, 0
        with torch.no_grad():
            for i in range(0, len(self.test), self.config.train.micro_batch_size):
                rows = [Row((e,)) for e in self.test[i:i + self.config.train.micro_batch_size]]
                loss, n = token_loss_sum(self.model, collate(rows, self.pad))
                total, count = total + float(loss), count + n
        return total / max(count, 1)

    def save(self) -> Path:
        state = {"optimizer": self.trainer.optimizer_state(), "schedule": self.trainer.schedule.state_dict(),
                 "position": self.position, "examples": len(self.examples)}
        return save_checkpoint(self.folder.checkpoints, self.step, self.model, state,
                               keep=self.config.checkpoint.keep, tokenizer=self.tokenizer)

    def train_step(self) -> dict[str, float]:
        t0 = time.perf_counter()
        micro_batches, after = self.batches()
        metrics = self.trainer.step(micro_batches)
        self.step, self.position = self.step + 1, after  # a step cut short draws its batch again
        metrics["time/step_s"] = time.perf_counter() - t0
        return {"step": self.step, **metrics}


def counts_metrics(counts: SFTCounts) -> dict[str, float]:
    """What the data rules did (sft_rows' docstring), in the first metrics line."""
    return {f"data/{name}": float(getattr(counts, name)) for name in
            ("rows", "examples", "no_assistant", "truncated", "dropped_overlong", "dropped_empty")}


def sft(config: SFTConfig, resume_dir: Path | None = None, on_step=None) -> SFTResult:
    """Train (or resume) an SFT run; the folder is runs/<run.name>/ as for `rlvr train`."""
    folder, checkpoint = open_folder(config, resume_dir)
    try:
        loop = SFTLoop(config, folder, checkpoint)
        if checkpoint is not None:
            loop.resume_from(checkpoint)
            folder.truncate_after(loop.step)
        elif resume_dir is None:
            folder.create(dump_config(config))
        return run_steps(loop, on_step)
    finally:
        folder.release()


def open_folder(config: SFTConfig, resume_dir: Path | None) -> tuple[RunFolder, Path | None]:
    if resume_dir is None:
        folder = RunFolder(Path(config.run.output_dir) / config.run.name)
        claim(folder)
        return folder, None
    folder = RunFolder(resume_dir)
    if not folder.config.is_file():
        raise ConfigError(f"{resume_dir}: no config.toml here, so there is no run to resume")
    folder.acquire()
    checkpoint, _notes = repair_for_resume(folder)
    if checkpoint is None and folder.metrics.exists():
        folder.release()
        raise ConfigError(f"{folder.checkpoints}: no checkpoint to resume from, but {folder.metrics} holds "
                          f"steps; resuming would start over and overwrite them")
    return folder, checkpoint


def run_steps(loop: SFTLoop, on_step=None) -> SFTResult:
    config, start = loop.config, time.perf_counter()
    schedule = CheckpointSchedule(config.checkpoint.every, config.checkpoint.every_minutes * 60 or None, loop.step)
    first, evaluated = loop.step == 0, (None, None)  # (step, test loss) of the last evaluation
    with stop_after_the_step(loop, config.run.sigterm_grace_s):  # Ctrl-C and SIGTERM, as `rlvr train`
        try:
            while loop.step < config.train.steps and not loop.stop_requested:
                metrics = loop.train_step()
                if first:
                    metrics, first = {**metrics, **counts_metrics(loop.counts)}, False
                if config.eval.every and loop.step % config.eval.every == 0 and loop.test:
                    evaluated = (loop.step, loop.test_loss())
                    metrics["sft/test_loss"] = evaluated[1]
                loop.folder.append_metrics(metrics)
                if on_step is not None:
                    on_step(loop.step, metrics)
                if schedule.due(loop.step) and loop.step < config.train.steps:
                    loop.save()
                    schedule.written(loop.step)
        except KeyboardInterrupt:
            loop.save()
            raise RunInterrupted(f"interrupted after step {loop.step}; resume with "
                                 f"`rlvr sft --resume {loop.folder.path}`") from None
    loop.save()
    if loop.stop_requested:
        raise RunInterrupted(f"stopped after step {loop.step}; resume with `rlvr sft --resume {loop.folder.path}`")
    test_loss = evaluated[1] if evaluated[0] == loop.step else loop.test_loss()  # the last step's, once
    return SFTResult(loop.folder, loop.step, time.perf_counter() - start, loop.counts, test_loss)


def load_sft_config(recipe: str | Path | None, overrides: list[str] = ()) -> SFTConfig:
    """An SFT recipe: a TOML file, or the name of one in recipes/sft/."""
    path = Path(recipe) if recipe is not None else None
    if path is not None and not path.exists() and (repo_root() / "recipes" / "sft" / f"{recipe}.toml").exists():
        path = repo_root() / "recipes" / "sft" / f"{recipe}.toml"
    return load_config(path, list(overrides), schema=SFTConfig)
