"""The run folder: runs/<name>/ with config.toml, metrics.jsonl, samples.jsonl, checkpoints/.

Metrics and samples are appended one line per step; on resume both are cut back to the
checkpoint's step, so the resumed run continues the same curve with no duplicated steps. A
rewrite goes to a new file renamed over the old one, so a kill at any moment leaves the old
lines or the new ones, never fewer. A line that is not a step's JSON (a torn last line, a
garbage line an editor left) is moved to `NAME.unreadable` with a note, never dropped. A
full disk while appending stops the run with one line, the file cut back to its whole lines.
`checkpointed.json` records the newest checkpoint written, so that a resume can tell a run
killed before its first checkpoint from one whose checkpoints were deleted.

One process at a time: `run.lock` holds an exclusive `flock` for the life of the process that
trains here (the kernel drops it when that process dies, kill -9 included) and the holder's
pid for the message; a second run of the same name, or a `--resume` of a live run, is refused.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import shutil
import socket
from pathlib import Path
from typing import Any

from rlvr.errors import ConfigError, RlvrError

PARTIAL = ".partial"  # suffix of a rewrite in progress; a killed one is removed on resume


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) during a run; its message names the folder to resume (printed by
    the CLI, which exits with `exit_status`: 130 for Ctrl-C, 143 for SIGTERM)."""

    def __init__(self, message: str, exit_status: int = 130):
        super().__init__(message)
        self.exit_status = exit_status


# The run locks this process holds. A flock belongs to the open file, which a fork shares: a
# forked child (a local rollout worker, rlvr.engines.local_pool) would hold the run's lock until
# it exits, and a resume would be refused while an orphaned one lives. The child closes its copies.
_HELD_LOCKS: set[int] = set()


def _drop_locks_in_child() -> None:
    for fd in _HELD_LOCKS:
        try:
            os.close(fd)
        except OSError:
            pass
    _HELD_LOCKS.clear()


os.register_at_fork(after_in_child=_drop_locks_in_child)


class RunFolderError(RlvrError):
    """A run file could not be written (full disk); the file keeps the lines written before."""


class RunFolder:
    writes = True  # False on the ranks of an FSDP run other than 0 (see SilentRunFolder)

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.config = self.path / "config.toml"
        self.metrics = self.path / "metrics.jsonl"
        self.samples = self.path / "samples.jsonl"
        # The prompts each step trained on, by source, with the policy version that generated them:
        # across a kill and resume, no prompt skipped and none trained twice can be read off it.
        self.ledger = self.path / "prompts.jsonl"
        self.checkpoints = self.path / "checkpoints"
        self.reward_curve = self.path / "reward_curve.png"
        self.lock_file = self.path / "run.lock"
        self.checkpointed = self.path / "checkpointed.json"
        self.data = self.path / "data.json"  # the fingerprint of the data read (orchestrate/data_fingerprint.py)
        self._lock_fd: int | None = None

    def holds_a_run(self) -> bool:
        return self.config.exists() or self.metrics.exists() or self.checkpoints.exists()

    def acquire(self) -> None:
        """Take the run's lock for this process, or refuse in one line naming the holder."""
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.lock_file, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:  # a name too long for the file system, no permission, a file in the way
            raise ConfigError(f"{self.path}: cannot be the run's folder ({e.strerror or e}); set run.output_dir / "
                              f"run.name to a folder you can write") from None
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
        _HELD_LOCKS.add(fd)

    def release(self) -> None:
        if self._lock_fd is not None:
            _HELD_LOCKS.discard(self._lock_fd)
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

    def append_ledger(self, row: dict[str, Any]) -> None:
        _append(self.ledger, row)

    def truncate_after(self, step: int) -> list[str]:
        """Drop the lines of steps after `step` (written by a run that died before its
        checkpoint); unreadable lines go to `NAME.unreadable`. Returns a note for each file
        that had any."""
        notes = []
        for file in (self.metrics, self.samples, self.ledger):
            if file.exists():
                keep, unreadable = split_lines(file.read_text(encoding="utf-8", errors="surrogateescape"), step)
                if unreadable:
                    aside = file.with_name(file.name + ".unreadable")
                    old = aside.read_text(encoding="utf-8", errors="surrogateescape") if aside.exists() else ""
                    rewrite(aside, old + "".join(f"{text}\n" for _, text in unreadable))
                    where = ", ".join(str(n) for n, _ in unreadable[:5]) + (" ..." if len(unreadable) > 5 else "")
                    notes.append(f"{file}: {len(unreadable)} line(s) that are not a step's JSON (line {where}) "
                                 f"moved to {aside.name}")
                rewrite(file, "".join(line + "\n" for line in keep))
        return notes

    def remove_partials(self) -> list[str]:
        """Delete what a rewrite killed midway left (call with the lock held)."""
        found = sorted(p for p in self.path.glob(f"*{PARTIAL}") if p.is_file())
        for p in found:
            p.unlink()
        return [p.name for p in found]

    def record_checkpoint(self, step: int) -> None:
        rewrite(self.checkpointed, json.dumps({"step": step}) + "\n")

    def recorded_checkpoint(self) -> int:
        """The step of the newest checkpoint this run wrote (0: none, or a run of an older rlvr)."""
        try:
            return int(json.loads(self.checkpointed.read_text(encoding="utf-8"))["step"])
        except (OSError, ValueError, KeyError, TypeError):
            return 0

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

    def append_ledger(self, row: dict[str, Any]) -> None:
        pass

    def truncate_after(self, step: int) -> list[str]:
        return []

    def record_checkpoint(self, step: int) -> None:
        pass


def split_lines(text: str, step: int) -> tuple[list[str], list[tuple[int, str]]]:
    """The lines of steps up to `step`, and (line number, text) of each line that is not a
    JSON object with an integer "step" (blank lines are neither)."""
    keep, unreadable = [], []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row_step = json.loads(line)["step"]
            if not isinstance(row_step, int) or isinstance(row_step, bool):
                raise TypeError
        except (json.JSONDecodeError, KeyError, TypeError, IndexError):
            unreadable.append((n, line))
            continue
        if row_step <= step:
            keep.append(line)
    return keep, unreadable


def rewrite(path: Path, text: str) -> None:
    """Replace `path`'s content atomically: a new file, synced, renamed over the old one."""
    partial = path.with_name(path.name + PARTIAL)
    with open(partial, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(partial, path)
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _clean(value: Any) -> Any:
    # JSON has no NaN; write null so that the file stays parseable by every reader.
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _append(path: Path, row: dict[str, Any]) -> None:
    """One line, whole or not at all: a failed write (a full disk) is cut back off the file."""
    data = (json.dumps({k: _clean(v) for k, v in row.items()}) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        start = os.fstat(fd).st_size
        try:
            written = 0
            while written < len(data):
                written += os.write(fd, data[written:])
        except OSError as e:
            os.ftruncate(fd, start)
            raise RunFolderError(f"{path}: cannot append the line of step {row.get('step', '?')} "
                                 f"({e.strerror or e}; {shutil.disk_usage(path.parent).free / (1 << 20):.1f} "
                                 f"MiB free); the run stopped and the file keeps every whole line written "
                                 f"before: free space, then `rlvr train --resume {path.parent}`") from None
    finally:
        os.close(fd)
