"""The live progress display: a rich bar on a terminal, plain lines elsewhere (CI, pipes)."""

from __future__ import annotations

import sys
import time

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn


class ProgressDisplay:
    def __init__(self, total_steps: int, mode: str = "auto", first_step: int = 1):
        self.console = Console(stderr=False)
        self.mode = ("rich" if sys.stdout.isatty() else "plain") if mode == "auto" else mode
        self.total = total_steps
        self.start = time.time()
        self.first_step = first_step
        self.last_eval = float("nan")
        self.bar = None
        if self.mode == "rich":
            self.bar = Progress(TextColumn("step"), MofNCompleteColumn(), BarColumn(),
                                TextColumn("{task.fields[stats]}"), TimeElapsedColumn(),
                                TextColumn("ETA"), TimeRemainingColumn(), console=self.console)
            self.task = self.bar.add_task("train", total=total_steps, completed=first_step - 1, stats="")
            self.bar.start()

    def update(self, step: int, metrics: dict[str, float]) -> None:
        if "eval/accuracy" in metrics:
            self.last_eval = metrics["eval/accuracy"]
        acc = "n/a" if self.last_eval != self.last_eval else f"{self.last_eval:.1%}"
        stats = (f"reward {metrics['reward/mean']:.3f}  held-out acc {acc}  "
                 f"{metrics['throughput/tokens_per_s']:.0f} tok/s")
        if self.bar is not None:
            self.bar.update(self.task, completed=step, stats=stats)
        elif self.mode == "plain" and (step % 10 == 0 or step == self.total or "eval/accuracy" in metrics):
            elapsed = time.time() - self.start
            done = step - self.first_step + 1
            eta = elapsed / done * (self.total - step) if done else float("nan")
            print(f"step {step}/{self.total}  {stats}  elapsed {elapsed:.0f}s  ETA {eta:.0f}s", flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()

    def note(self, text: str) -> None:
        if self.mode != "none":
            self.console.print(text)
