"""Run untrusted Python under isolation and limits; see `pool.Sandbox` and docs/rewards-code.md."""

from rlvr.rewards.sandbox.plan import Plan
from rlvr.rewards.sandbox.probe import bwrap_unavailable
from rlvr.rewards.sandbox.pool import Sandbox, choose_plan
from rlvr.rewards.sandbox.types import Execution, Isolation, Job, Limits, SandboxUnavailable

__all__ = [
    "Execution",
    "Isolation",
    "Job",
    "Limits",
    "Plan",
    "Sandbox",
    "SandboxUnavailable",
    "bwrap_unavailable",
    "choose_plan",
]
