"""Warm mode: one long-lived bwrap sandbox whose interpreter forks each run.

The zygote (`inside.serve`) gets each job's six pipe ends over a unix socket (SCM_RIGHTS), so
the job's data never passes through it; it forks J0, which takes new pid, mount, network and
IPC namespaces and a private scratch tmpfs for this job alone, and J1 inside them runs the job
as a fresh sandbox would. Saved per run: bwrap's setup and the interpreter's start.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import tempfile
import time

from rlvr.rewards.sandbox.pipes import GRACE_S, JobPipes, pump
from rlvr.rewards.sandbox.plan import SANDBOX_ENV, SCRATCH_IN_BWRAP, Plan
from rlvr.rewards.sandbox.program import python_command
from rlvr.rewards.sandbox.types import Execution, Job, Limits


class WarmRunner:
    """Runs jobs one at a time in its own zygote sandbox, restarting it if it dies."""

    def __init__(self, plan: Plan, limits: Limits):
        if plan.kind != "bwrap" or not plan.warm:
            raise ValueError(f"warm mode needs a warm bwrap plan, got {plan}")
        self.plan, self.limits = plan, limits
        self._process: subprocess.Popen | None = None
        self._sock: socket.socket | None = None
        self._log = None  # the zygote's stderr, read back when it reports an error
        self._jobs = 0

    def run(self, job: Job) -> Execution:
        """Hand the job to the zygote, pump its pipes, and read the zygote's report."""
        start = time.monotonic()
        try:
            self._ensure_started()
            job_id, pipes = self._hand_over(job)
        except OSError as error:
            self._stop_zygote()
            return self._failed(f"the warm sandbox failed: {error}", start)
        deadline = start + job.wall_limit(self.limits)  # the zygote's own; ours only backs it up
        stop = lambda: self._send_kill(job_id)  # noqa: E731
        pumped = pump(pipes, deadline + GRACE_S, self.limits.output_kb << 10, stop)
        report = self._report(job_id, deadline + 2 * GRACE_S)
        if "error" in report:
            self._stop_zygote()
            return self._failed(report["error"], start)
        outputs = pumped.outputs
        return Execution(
            report["exit"], outputs["stdout"], outputs["stderr"], outputs["results"],
            timed_out=report["timed_out"] or pumped.timed_out,
            output_limited=pumped.output_limited,
            wall_s=time.monotonic() - start,
            isolation=self.plan.isolation(),
        )  # fmt: skip

    def _hand_over(self, job: Job) -> tuple[int, JobPipes]:
        """Send the job's order and its pipes' child ends to the zygote; keep the parent ends."""
        self._jobs += 1
        uids = self.plan.uids()
        header = job.header_bytes(self.plan.header_extra(self.limits, uids, SCRATCH_IN_BWRAP))
        pipes = JobPipes.open(job, header)
        order = {
            "job": self._jobs,
            "wall_s": job.wall_limit(self.limits),
            "scratch_bytes": self.limits.scratch_mb << 20,
            "scratch_uid": uids["candidate"] if uids else None,
        }
        try:
            socket.send_fds(self._sock, [json.dumps(order).encode()], pipes.child)
        except OSError:
            pipes.close_all()
            raise
        pipes.close_child_ends()
        return self._jobs, pipes

    def _ensure_started(self) -> None:
        if self._process is not None and self._process.poll() is None:
            return
        self._stop_zygote()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._log = tempfile.TemporaryFile()
        command = python_command(
            self.plan.python, self.plan.program(), "serve", str(theirs.fileno())
        )
        try:
            self._process = subprocess.Popen(
                self.plan.argv(command, self.limits),
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=self._log,
                pass_fds=[theirs.fileno()],
                start_new_session=True,
                env=SANDBOX_ENV,
            )
        finally:
            theirs.close()
        self._sock = ours

    def _report(self, job_id: int, deadline: float) -> dict:
        """The zygote's report on job `job_id`, or {"error": ...} if it does not come in time."""
        try:
            self._sock.settimeout(max(deadline - time.monotonic(), 0.01))
            report = json.loads(self._sock.recv(1 << 16) or b"{}")
        except (OSError, ValueError) as error:
            return {"error": f"no report from the warm sandbox: {type(error).__name__}: {error}"}
        if report.get("job") != job_id or "error" in report:
            return {
                "error": report.get("error", f"warm sandbox answered {report!r}") + self._log_tail()
            }
        return report

    def _send_kill(self, job_id: int) -> None:
        try:
            self._sock.send(json.dumps({"kill": job_id}).encode())
        except OSError:  # the zygote is gone; its namespace died with it
            pass

    def _log_tail(self) -> str:
        self._log.seek(0)
        tail = self._log.read()[-500:].decode(errors="replace").strip()
        return f"; sandbox log: {tail}" if tail else ""

    def _stop_zygote(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._process is not None:
            try:
                os.killpg(self._process.pid, signal.SIGKILL)
            except ProcessLookupError:  # already gone
                pass
            self._process.wait()
            self._process = None

    def _failed(self, why: str, start: float) -> Execution:
        return Execution(
            None, b"", b"", b"", False, False, time.monotonic() - start, self.plan.isolation(), why
        )

    def close(self) -> None:
        """Stop the zygote sandbox (it also dies with this process: --die-with-parent)."""
        self._stop_zygote()
