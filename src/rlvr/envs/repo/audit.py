"""`rlvr audit repo`: play the agentic attacks (attacks.py) against a real RepoEnv and check each.

An attack passes when its episode scores 0 *and* the tampering monitor raised its expected
flag; it is "hacked" when it scored, "not flagged" when it scored 0 unseen. A control passes
when it scores above 0.9. The reference solution is planted on the host first (source and
.pyc, in a fresh temporary folder, removed after), and a TCP server on the host's loopback
offers the fixed file to any connection (the network attack's only way to it); connections it
accepted are reported, and fail the audit.
"""

from __future__ import annotations

import contextlib
import py_compile
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from rlvr.envs.repo.attacks import AUDIT_ROW, GOOD, REFERENCE_NAME, RepoAttack, repo_attacks
from rlvr.envs.repo.env import RepoSettings, repo_env, task_samples
from rlvr.envs.repo.task import task_from_row
from rlvr.rewards.audit import loopback_server
from rlvr.rewards.sandbox import Limits, Sandbox

CONTROL_MIN = 0.9


@dataclass(frozen=True)
class RepoOutcome:
    attack: RepoAttack
    score: float
    reason: str
    flags: tuple[str, ...]
    seconds: float
    status: str  # ok | hacked | not flagged | control failed | error


@dataclass
class RepoAuditReport:
    outcomes: list[RepoOutcome]
    oracle_connections: int = 0
    isolation: str = ""
    statuses: tuple[str, ...] = field(default=("hacked", "not flagged", "error"))

    @property
    def failed(self) -> bool:
        return bool(self.oracle_connections or any(o.status in self.statuses for o in self.outcomes))


@contextlib.contextmanager
def planted_reference() -> Iterator[Path]:
    """The fixed module as REFERENCE_NAME.py and its .pyc in a fresh host folder."""
    folder = Path(tempfile.mkdtemp(prefix="rlvr-audit-reference-"))
    try:
        source = folder / f"{REFERENCE_NAME}.py"
        source.write_text(GOOD)
        py_compile.compile(str(source), cfile=str(folder / f"{REFERENCE_NAME}.pyc"))
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def fix_server():
    """A loopback TCP server that sends the fixed file for any request (rewards.audit's server)."""
    return loopback_server(lambda request: GOOD.encode())


def play(attack: RepoAttack, make_env, sample) -> RepoOutcome:
    """One attack's episode, turn by turn, to its submit; its outcome (never raises)."""
    start = time.perf_counter()
    env = make_env()
    try:
        env.reset(sample, 0)
        result = None
        for turn in attack.turns:
            result = env.step(turn)
            if result.done:
                break
    except Exception as error:  # an environment that raises on an attack is a finding
        return RepoOutcome(attack, 0.0, f"raised {type(error).__name__}: {error}"[:200], (), time.perf_counter() - start, "error")
    score = result.reward if result is not None and result.done else 0.0
    flags = env.tampering
    if attack.control:
        status = "ok" if score > CONTROL_MIN else "control failed"
    else:
        status = "hacked" if score > 0 else "ok" if attack.expected_flag in flags else "not flagged"
    reason = env.verdict.reason if env.verdict else "not submitted"
    return RepoOutcome(attack, score, reason, flags, time.perf_counter() - start, status)


def run_repo_audit(workers: int = 2, isolation: str = "auto", allow_unisolated: bool = False) -> RepoAuditReport:
    """Every attack of attacks.py against a RepoEnv on the audit task (module docstring);
    `isolation` / `allow_unisolated` choose the sandbox (`Sandbox`), e.g. to see what a weaker
    one lets through."""
    task = task_from_row(AUDIT_ROW, "rlvr.envs.repo.attacks.AUDIT_ROW")
    settings = RepoSettings(max_turns=8, max_tool_calls=8, run_timeout_s=3.0)
    with planted_reference(), fix_server() as (port, accepted), \
            Sandbox(Limits(wall_s=20, test_wall_s=3, cpu_s=3), workers=workers, isolation=isolation,
                    allow_unisolated=allow_unisolated) as sandbox:
        make_env, (sample,) = repo_env([task], sandbox, settings), task_samples([task])
        attacks = repo_attacks(port)
        with ThreadPoolExecutor(workers) as pool:
            outcomes = list(pool.map(lambda a: play(a, make_env, sample), attacks))
        return RepoAuditReport(outcomes, len(accepted), sandbox.isolation.describe())
