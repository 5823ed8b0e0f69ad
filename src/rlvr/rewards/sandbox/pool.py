"""`Sandbox`: runs untrusted Python, many runs at a time, under the best isolation available."""

from __future__ import annotations

import dataclasses
import os
import queue
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Iterable, Sequence

from rlvr.rewards.sandbox.fresh import FreshRunner
from rlvr.rewards.sandbox.plan import Plan, cannot_try, python_executable
from rlvr.rewards.sandbox.probe import probe
from rlvr.rewards.sandbox.types import Execution, Isolation, Job, Limits, SandboxUnavailable
from rlvr.rewards.sandbox.warm import WarmRunner

KINDS = ("bwrap", "unshare", "none")
MODES = ("auto", "warm", "fresh")
MIN_RUN_S = 0.05  # a run given less than this could not even start its interpreter


def choose_plan(
    isolation: str = "auto",
    mode: str = "auto",
    allow_unisolated: bool = False,
    python: str | None = None,
) -> Plan:
    """The first isolation that works here, among those the caller accepts.

    `isolation`: "auto" (bwrap, else unshare, else none if allowed) or one kind by name.
    `mode`: "warm" (fork per run from a warm interpreter; bwrap only), "fresh" (a new sandbox
    and interpreter per run), or "auto" (warm where bwrap works, else fresh).
    Raises SandboxUnavailable, naming why each kind failed, when none is acceptable.
    """
    _check_choice(isolation, mode, allow_unisolated)
    kinds = [isolation] if isolation != "auto" else ["bwrap", "unshare"]
    kinds += ["none"] if isolation == "auto" and allow_unisolated else []
    root, python = os.geteuid() == 0, os.path.realpath(python or python_executable())
    failures = []
    for kind in kinds:
        plan = Plan(kind, kind == "bwrap" and mode != "fresh", root, python)
        if mode == "warm" and kind != "bwrap":
            failures.append(f"{kind}: warm mode needs bwrap")
            continue
        why = cannot_try(plan) or probe(plan)
        if why is None:
            return plan
        failures.append(f"{kind}: {why}")
    hint = "" if allow_unisolated else "; or pass allow_unisolated=True to run it with rlimits only"
    raise SandboxUnavailable(
        "cannot isolate model code here (" + "; ".join(failures) + "). Install bubblewrap "
        "(Debian: apt-get install bubblewrap) and allow user namespaces" + hint
    )


def _check_choice(isolation: str, mode: str, allow_unisolated: bool) -> None:
    if isolation not in ("auto", *KINDS) or mode not in MODES:
        raise ValueError(
            f"isolation must be one of {('auto', *KINDS)} and mode one of {MODES}; "
            f"got isolation={isolation!r}, mode={mode!r}"
        )
    if isolation == "none" and not allow_unisolated:
        raise SandboxUnavailable(
            "isolation='none' runs model code unisolated: pass allow_unisolated=True to accept that"
        )


class Sandbox:
    """A pool of `workers` runners that execute jobs in parallel, each under `limits`.

    `isolation`, `mode` and `allow_unisolated` choose the isolation (see `choose_plan`);
    `python` is the interpreter that runs model code (default: this process's own).

    Threads drive the runs (each run is a child process or a fork of a warm sandbox, so the
    GIL is not the bottleneck); a run never executes in this process.

        with Sandbox(Limits(wall_s=5)) as sandbox:
            run = sandbox.run_python("print(1 + 1)")
            run.stdout, run.isolation.describe()
    """

    def __init__(
        self,
        limits: Limits = Limits(),
        *,
        workers: int = 2,
        mode: str = "auto",
        isolation: str = "auto",
        allow_unisolated: bool = False,
        python: str | None = None,
    ):
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.limits, self.plan = limits, choose_plan(isolation, mode, allow_unisolated, python)
        runner = WarmRunner if self.plan.warm else FreshRunner
        self._runners = [runner(self.plan, limits) for _ in range(workers)]
        self._free: queue.Queue = queue.Queue()
        for each in self._runners:
            self._free.put(each)
        self._executor = ThreadPoolExecutor(workers, thread_name_prefix="rlvr-sandbox")

    @property
    def isolation(self) -> Isolation:
        """What every run of this sandbox keeps."""
        return self.plan.isolation()

    def run(self, job: Job) -> Execution:
        """Run one job, waiting for a free runner; safe to call from several threads."""
        runner = self._free.get()
        try:
            return runner.run(job)
        finally:
            self._free.put(runner)

    def run_python(self, code: str, stdin: bytes = b"") -> Execution:
        """Run `code` as a whole program (`__main__`) with `stdin`."""
        return self.run(Job.python(code, stdin))

    def map(self, jobs: Iterable[Job]) -> list[Execution]:
        """Run `jobs` in parallel on the pool; results in the order of `jobs`."""
        return list(self._executor.map(self.run, jobs))

    def run_in_turn(self, jobs: Sequence[Job]) -> list[Execution | None]:
        """Run `jobs` one after another on one runner, as the tests of one answer.

        Each job is killed at its own `wall_s` (default: `limits.test_wall_s`) or at what is
        left of `limits.wall_s` for the sequence, whichever comes first; so a hang costs its
        job at most test_wall_s and the later jobs still run while the sequence's budget
        lasts. A job that finds the budget spent is not run: None in its place.
        """
        runner = self._free.get()
        try:
            start, out = time.monotonic(), []
            for job in jobs:
                left = self.limits.wall_s - (time.monotonic() - start)
                if left < MIN_RUN_S:
                    out.append(None)
                    continue
                wall = min(left, self.limits.test_wall_s if job.wall_s is None else job.wall_s)
                out.append(runner.run(dataclasses.replace(job, wall_s=wall)))
            return out
        finally:
            self._free.put(runner)

    def map_in_turn(self, sequences: Iterable[Sequence[Job]]) -> list[list[Execution | None]]:
        """`run_in_turn` for each sequence, the sequences in parallel on the pool."""
        return list(self._executor.map(self.run_in_turn, sequences))

    def close(self) -> None:
        """Stop the workers and any warm sandboxes."""
        self._executor.shutdown(wait=True)
        for each in self._runners:
            each.close()

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
