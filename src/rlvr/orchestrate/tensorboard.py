"""Optional TensorBoard logging (`log.tensorboard = true`): the same scalars as metrics.jsonl."""

from __future__ import annotations

from pathlib import Path

from rlvr.errors import ConfigError


class TensorBoardLog:
    def __init__(self, log_dir: Path):
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError:
            raise ConfigError("log.tensorboard = true needs the tensorboard package "
                              "(pip install 'rlvr[tensorboard]')") from None
        self.writer = SummaryWriter(log_dir=str(log_dir))

    def write(self, metrics: dict[str, float]) -> None:
        step = int(metrics["step"])
        for key, value in metrics.items():
            if key != "step" and isinstance(value, (int, float)):
                self.writer.add_scalar(key, value, step)
        self.writer.flush()

    def close(self) -> None:
        self.writer.close()
