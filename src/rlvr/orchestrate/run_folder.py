"""The run folder: runs/<name>/ with config.toml, metrics.jsonl, samples.jsonl, checkpoints/.

Metrics and samples are appended one line per step; on resume both are cut back to the
checkpoint's step, so the resumed run continues the same curve with no duplicated steps.

One process at a time: `run.lock` holds an exclusive `flock` for the life of the process that
trains here (the kernel drops it when that process dies, kill -9 included) and the holder's
pid for the message; a second run of the same name, or a `--resume` of a live run, is refused.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import socket
from pathlib import Path
from typing import Any

from rlvr.errors import ConfigError


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during a run; its message names the folder to resume (printed by the CLI)."""


class RunFolder:
    writes = True  # False on the ranks of an FSDP run other than 0 (see SilentRunFolder)

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.config = self.path / "config.toml"
        self.metrics = self.path / "metrics.jsonl"
        self.samples = self.path / "samples.jsonl"
        self.checkpoints = self.path / "checkpoints"
        self.reward_curve = self.path / "reward_curve.png"
        self.lock_file = self.path / "run.lock"
        self._lock_fd: int | None = None

    def holds_a_run(self) -> bool:
        return self.config.exists() or self.metrics.exists() or self.checkpoints.exists()

    def acquire(self) -> None:
        """Take the run's lock for this process, or refuse in one line naming the holder."""
        self.path.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_file, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another process"
            os.close(fd)
            raise ConfigError(f"{self.path}: a run is training in this folder now ({holder}); wait for it "
                              "to end or stop it, or pick another --set run.name=...") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()}\n".encode(), 0)
        self._lock_fd = fd

    def release(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing drops the flock; the file stays (unlinking it would race)
            self._lock_fd = None

    def create(self, config_toml: str) -> None:
        """Write config.toml (whole or not at all); call with the lock held."""
        self.path.mkdir(parents=True, exist_ok=True)
        partial = self.config.with_suffix(".toml.tmp")
        partial.write_text(config_toml, encoding="utf-8")
        os.replace(partial, self.config)

    def append_metrics(self, row: dict[str, Any]) -> None:
        _append(self.metrics, row)

    def append_samples(self, rows: list[dict[str, Any]]) -> None:
        for row in rows:
            _append(self.samples, row)

    def truncate_after(self, step: int) -> None:
        """Drop the lines of steps after `step` (written by a run that died before its
        checkpoint)."""
        for file in (self.metrics, self.samples):
            if file.exists():
                keep = [line for line in file.read_text(encoding="utf-8").splitlines()
                        if line.strip() and _step_of(line) <= step]
                file.write_text("".join(line + "\n" for line in keep), encoding="utf-8")

    def read_metrics(self) -> list[dict[str, Any]]:
        if not self.metrics.exists():
            return []
        return [json.loads(line) for line in self.metrics.read_text(encoding="utf-8").splitlines() if line.strip()]


class SilentRunFolder(RunFolder):
    """The run folder as seen by the ranks of an FSDP run other than 0: it reads the files
    rank 0 writes (checkpoints on resume), and writes nothing."""

    writes = False

    def acquire(self) -> None:
        pass  # rank 0 holds the lock for the whole FSDP run

    def create(self, config_toml: str) -> None:
        pass

    def append_metrics(self, row: dict[str, Any]) -> None:
        pass

    def append_samples(self, rows: list[dict[str, Any]]) -> None:
        pass

    def truncate_after(self, step: int) -> None:
        pass


def _step_of(line: str) -> int:
    try:
        return int(json.loads(line)["step"])
    except (json.JSONDecodeError, KeyError, TypeError, ValueError):
        return 1 << 62  # a torn last line from a kill -9: drop it


def _clean(value: Any) -> Any:
    # JSON has no NaN; write null so that the file stays parseable by every reader.
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _append(path: Path, row: dict[str, Any]) -> None:
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps({k: _clean(v) for k, v in row.items()}) + "\n")
        f.flush()
