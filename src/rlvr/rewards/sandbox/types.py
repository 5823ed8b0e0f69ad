"""What a sandbox run takes and gives back: limits, a job, an execution and its isolation."""

from __future__ import annotations

import marshal
from dataclasses import dataclass

from rlvr.errors import RewardError


class SandboxUnavailable(RewardError):
    """No isolation that the caller accepts can run here (the message says what was tried)."""


@dataclass(frozen=True)
class Limits:
    """The budget of one run. Each limit applies to every process of the run's model code.

    Attributes:
        wall_s: wall-clock seconds for the whole run; then every process of it is killed. For
            the code verifier, the budget of one answer's tests taken together.
        test_wall_s: wall-clock seconds for one test of the code verifier (each test is its
            own run, killed at min(test_wall_s, what is left of wall_s)); plain runs ignore it.
        cpu_s: CPU seconds per process (RLIMIT_CPU).
        memory_mb: address space per process, in MiB (RLIMIT_AS).
        processes: processes and threads the candidate may have at once (RLIMIT_NPROC).
        file_size_mb: largest file it may write, in MiB (RLIMIT_FSIZE).
        open_files: descriptors per process (RLIMIT_NOFILE).
        output_kb: stdout, stderr and results are each cut (and the run stopped) past this.
        scratch_mb: size of the private scratch tmpfs (the working directory, also /tmp).
    """

    wall_s: float = 10.0
    test_wall_s: float = 5.0
    cpu_s: float = 10.0
    memory_mb: int = 512
    processes: int = 16
    file_size_mb: int = 16
    open_files: int = 64
    output_kb: int = 1024
    scratch_mb: int = 64

    def __post_init__(self) -> None:
        for name, value in self.__dict__.items():
            if not value > 0:
                raise ValueError(f"sandbox limit {name} must be positive, got {value!r}")
        if self.open_files < 16:
            raise ValueError(
                f"open_files must be at least 16 (the harness needs some), got {self.open_files}"
            )

    def for_header(self) -> dict:
        """The rlimits as the sandbox side reads them (bytes and whole seconds)."""
        return {
            "cpu_s": max(1, round(self.cpu_s)),
            "memory_bytes": self.memory_mb << 20,
            "processes": self.processes,
            "file_size_bytes": self.file_size_mb << 20,
            "open_files": self.open_files,
        }


@dataclass(frozen=True)
class Job:
    """One run: a mode of the sandbox program and what it reads.

    Attributes:
        header: the mode ("python", "call", "check") and its public payload: plain data. The
            sandbox adds limits and uids itself.
        stdin: the program's standard input.
        secret: read only by the checker role (mode "check"); never by model code.
        wall_s: this run's wall-clock limit; None: the sandbox's `Limits.wall_s`.
    """

    header: dict
    stdin: bytes = b""
    secret: bytes = b""
    wall_s: float | None = None

    def __post_init__(self) -> None:
        if self.wall_s is not None and not self.wall_s > 0:
            raise ValueError(f"a job's wall_s must be positive, got {self.wall_s!r}")

    def wall_limit(self, limits: Limits) -> float:
        return limits.wall_s if self.wall_s is None else self.wall_s

    @classmethod
    def python(cls, code: str, stdin: bytes = b"") -> "Job":
        """A whole program run as `__main__`."""
        return cls({"mode": "python", "code": code}, stdin)

    def header_bytes(self, extra: dict) -> bytes:
        """The header as the sandbox reads it: marshal (trusted data, and no json import there)."""
        return marshal.dumps({**self.header, **extra})


@dataclass(frozen=True)
class Isolation:
    """What isolates a run, in words.

    Attributes:
        kind: "bwrap", "unshare" or "none".
        warm: runs are forked from a warm interpreter inside one long-lived sandbox.
        keeps: the protections every run has, e.g. "no network", "read-only system".
    """

    kind: str
    warm: bool
    keeps: tuple[str, ...]

    def describe(self) -> str:
        mode = "warm fork" if self.warm else "fresh process"
        return f"{self.kind} ({mode}): " + ", ".join(self.keeps)


@dataclass(frozen=True)
class Execution:
    """What one run did.

    Attributes:
        exit_code: the program's exit code, 128 + signal if a signal killed it; None when the
            sandbox itself failed (see `error`).
        stdout, stderr: its output streams, each cut at the output limit.
        results: what the harness wrote on the results channel (fd 4), cut likewise.
        timed_out: the wall-clock limit ended the run.
        output_limited: some stream passed the output limit; the run was stopped.
        wall_s: seconds from start to the end of all its output.
        isolation: what isolated it.
        error: set when the sandbox failed to run the job at all (not the program's fault).
    """

    exit_code: int | None
    stdout: bytes
    stderr: bytes
    results: bytes
    timed_out: bool
    output_limited: bool
    wall_s: float
    isolation: Isolation
    error: str | None = None
