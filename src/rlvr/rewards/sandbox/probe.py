"""Does a sandbox plan (plan.py) work on this machine? One tiny job run under it, through the
runners (fresh.py, warm.py), which themselves read the plan: so the probe has a module of its
own above both."""

from __future__ import annotations

import os
from functools import lru_cache

from rlvr.rewards.sandbox.fresh import FreshRunner
from rlvr.rewards.sandbox.plan import Plan, cannot_try, python_executable
from rlvr.rewards.sandbox.types import Job, Limits
from rlvr.rewards.sandbox.warm import WarmRunner


@lru_cache(maxsize=None)
def probe(plan: Plan) -> str | None:
    """Run one tiny job under `plan`; None if it worked, else why not (cached per process).

    Call `cannot_try` first: this assumes the plan's tools exist.
    """
    runner = (WarmRunner if plan.warm else FreshRunner)(plan, Limits(wall_s=30))
    try:
        run = runner.run(Job.python("import json; print('ok')"))
    finally:
        runner.close()
    if run.error is None and run.exit_code == 0 and run.stdout == b"ok\n":
        return None
    detail = (
        run.error or run.stderr.decode(errors="replace").strip()[-300:] or f"exit {run.exit_code}"
    )
    return f"a test run failed: {detail}"


def bwrap_unavailable() -> str | None:
    """Why bubblewrap cannot sandbox runs here, or None when it can (for skipping tests)."""
    plan = Plan("bwrap", False, os.geteuid() == 0, python_executable())
    return cannot_try(plan) or probe(plan)
