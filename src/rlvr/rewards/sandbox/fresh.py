"""Fresh mode: a new sandbox and interpreter for every run (the baseline; about 25 ms of CPU)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time

from rlvr.rewards.sandbox import seccomp
from rlvr.rewards.sandbox.pipes import GRACE_S, JobPipes, pump
from rlvr.rewards.sandbox.plan import SANDBOX_ENV, SCRATCH_IN_BWRAP, Plan
from rlvr.rewards.sandbox.program import python_command
from rlvr.rewards.sandbox.types import Execution, Job, Limits


_KILL_ALL = "import os, signal\ntry:\n    os.kill(-1, signal.SIGKILL)\nexcept OSError:\n    pass"


class FreshRunner:
    """Runs each job in its own newly started sandbox; one job at a time."""

    def __init__(self, plan: Plan, limits: Limits):
        self.plan, self.limits = plan, limits

    def run(self, job: Job) -> Execution:
        """Start the sandbox, feed and drain the job, kill it at its deadline, clean up."""
        uids = self.plan.uids()
        scratch = SCRATCH_IN_BWRAP if self.plan.kind == "bwrap" else self._host_scratch(uids)
        header = job.header_bytes(self.plan.header_extra(self.limits, uids, scratch))
        pipes = JobPipes.open(job, header)
        start = time.monotonic()
        try:
            process = self._start(pipes)
        except OSError as error:
            pipes.close_all()
            self._clean_up(uids, scratch)
            return self._failed(f"could not start the sandbox: {error}", start)
        pipes.close_child_ends()
        stop = lambda: _kill_group(process)  # noqa: E731
        pumped = pump(pipes, start + job.wall_limit(self.limits), self.limits.output_kb << 10, stop)
        exit_code = _reap(process)
        self._clean_up(uids, scratch)
        outputs = pumped.outputs
        return Execution(
            exit_code, outputs["stdout"], outputs["stderr"], outputs["results"],
            timed_out=pumped.timed_out,
            output_limited=pumped.output_limited,
            wall_s=time.monotonic() - start,
            isolation=self.plan.isolation(),
        )  # fmt: skip

    def _start(self, pipes: JobPipes) -> subprocess.Popen:
        stdin, stdout, stderr, *extra = pipes.child
        command = python_command(self.plan.python, self.plan.program(), "job", *map(str, extra))
        filter_fd = seccomp.program_fd(seccomp.program()) if self.plan.bwrap_loads_filter() else None
        try:
            return subprocess.Popen(
                self.plan.argv(command, self.limits, filter_fd),
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                pass_fds=extra + ([] if filter_fd is None else [filter_fd]),
                start_new_session=True,
                env=SANDBOX_ENV,
            )
        finally:
            if filter_fd is not None:
                os.close(filter_fd)

    def _host_scratch(self, uids: dict | None) -> str:
        """A scratch folder on the host for kinds without a private tmpfs, owned by the run."""
        path = tempfile.mkdtemp(prefix="rlvr-scratch-")
        if uids:
            os.chown(path, uids["candidate"], uids["candidate"])
        return path

    def _clean_up(self, uids: dict | None, scratch: str) -> None:
        """Without a pid namespace, a run's strays are found by uid; its scratch is removed."""
        try:
            if self.plan.kind == "none" and uids:
                for uid in uids.values():  # kill(-1) as that uid: all it owns but this one
                    command = [self.plan.python, "-I", "-S", "-c", _KILL_ALL]
                    subprocess.run(command, user=uid, check=False)
        finally:
            if scratch != SCRATCH_IN_BWRAP:
                shutil.rmtree(scratch, ignore_errors=True)

    def _failed(self, why: str, start: float) -> Execution:
        return Execution(
            None, b"", b"", b"", False, False, time.monotonic() - start, self.plan.isolation(), why
        )

    def close(self) -> None:
        """Nothing is kept between runs."""


def _kill_group(process: subprocess.Popen) -> None:
    """Kill the sandbox's process group; its namespace (or --kill-child) takes the rest."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:  # already gone
        pass


def _reap(process: subprocess.Popen) -> int | None:
    """Wait for the sandbox to exit (killing it if it will not); its shell-style exit code."""
    try:
        process.wait(timeout=GRACE_S)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        process.wait()
    code = process.returncode
    return code if code >= 0 else 128 - code
