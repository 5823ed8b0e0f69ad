"""Reward for code: run the answer against its tests in the sandbox; score = share passed.

A test counts as passed only when a record saying so arrives through a channel the model's
code cannot write (assert style: the separate checker process) or when the parent itself
finds the returned value or printed output equal to the expected one (call and stdio styles:
the expected values never enter the sandbox). Exit codes, exceptions, printed runner output
and missing records never count. See `code/harness.py` for the argument in full and
docs/reward-hacks.md for the attacks this stops.

One test, one process: each test is its own sandbox run (a fresh candidate process, scratch
and namespaces), so nothing the answer keeps in memory, files or processes reaches the next
test; an answer's tests run in turn, each stopped at `Limits.test_wall_s`, all together at
`Limits.wall_s` (`Sandbox.run_in_turn`), so a hang costs only its own test while the
answer's budget lasts. Test files (pytest, unittest styles) are first collected, once per
file, with no candidate at all: their list of tests is the denominator of the score.
"""

from __future__ import annotations

import json
import re
import weakref
from dataclasses import dataclass
from typing import Sequence

from rlvr.rewards.code.codec import encode_value
from rlvr.rewards.code.outcomes import (
    Outcome,
    call_outcomes,
    check_outcomes,
    read_collection,
    read_records,  # noqa: F401  (part of this module's interface)
    verdict_from,
)
from rlvr.rewards.code.tests import COMPARISONS, MODULE_STYLES, CodeTests, outputs_match
from rlvr.rewards.sandbox import Execution, Job, Limits, Sandbox
from rlvr.rewards.verdict import Verdict

_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)```", re.DOTALL)
EXTRACTORS = ("last_block", "raw")


def extract_code(response: str, method: str = "last_block") -> str:
    """The code in a response.

    "last_block": the last fenced block tagged python/py/python3 or untagged; a response with
    no fenced block is taken whole (a HumanEval-style completion). "raw": the whole response.
    """
    if method == "raw":
        return response
    blocks = [
        body
        for lang, body in _FENCE.findall(response)
        if lang.lower() in ("", "python", "py", "python3")
    ]
    return blocks[-1] if blocks else response


class CodeVerifier:
    """Score a code answer by the fraction of its tests that really ran and really passed.

    `gold` is a `CodeTests` or its JSON text (see `code/tests.py`). Runs go through a
    `Sandbox` (one is made from `limits`, `workers`, `mode`, `isolation`, `allow_unisolated`
    unless `sandbox` is given; it raises SandboxUnavailable here, not at the first answer).

        verifier = CodeVerifier(limits=Limits(wall_s=5))
        verifier(response="```python\\ndef add(a, b):\\n    return a + b\\n```",
                 gold='{"style": "call", "entry_point": "add", '
                      '"tests": [{"args": [1, 2], "expected": 3}]}')
        # Verdict(score=1.0, reason='1/1 tests passed', flags=())

    `isolate_tests=False` is the old whole-file mode (one process for all of an answer's
    tests, under `wall_s` alone): a stateful answer then carries state from test to test, and
    a hang takes the tests after it. It is kept to measure against; do not train with it.

    Flags: "no_code", "tests_not_run" (some test left no result), "timeout", "output_limit",
    "tampered" (malformed or repeated records), "sandbox_error" (the sandbox failed, not the
    code), "tests_not_collected" (the test file gives no tests to run: score 0 for every answer).
    """

    def __init__(
        self,
        *,
        sandbox: Sandbox | None = None,
        limits: Limits = Limits(),
        workers: int = 2,
        mode: str = "auto",
        isolation: str = "auto",
        allow_unisolated: bool = False,
        extract: str = "last_block",
        comparison: str = "lines",
        rel_tol: float = 1e-6,
        abs_tol: float = 1e-9,
        max_chars: int = 100_000,
        isolate_tests: bool = True,
    ):
        if extract not in EXTRACTORS or comparison not in COMPARISONS:
            raise ValueError(
                f"extract must be one of {EXTRACTORS} and comparison one of {COMPARISONS}; "
                f"got extract={extract!r}, comparison={comparison!r}"
            )
        if sandbox is None:
            sandbox = Sandbox(
                limits,
                workers=workers,
                mode=mode,
                isolation=isolation,
                allow_unisolated=allow_unisolated,
            )
            self._finalizer = weakref.finalize(self, sandbox.close)
        self.sandbox, self.extract, self.comparison = sandbox, extract, comparison
        self.rel_tol, self.abs_tol, self.max_chars = rel_tol, abs_tol, max_chars
        self.isolate_tests = isolate_tests
        self._collected: dict[tuple[str, str], tuple[str, ...] | str] = {}

    def __call__(self, *, response: str, gold: "str | CodeTests") -> Verdict:
        """Check one answer; see the class docstring."""
        return self.score_many([(response, gold)])[0]

    def score_many(self, pairs: Sequence[tuple[str, "str | CodeTests"]]) -> list[Verdict]:
        """Check many answers: each answer's tests in turn, the answers in parallel on the pool."""
        parsed = [(response, CodeTests.parse(gold)) for response, gold in pairs]
        failed = self._collect([tests for _, tests in parsed if tests.style in MODULE_STYLES])
        plans = [self._plan(response, tests, failed) for response, tests in parsed]
        sequences = [plan.jobs for plan in plans if isinstance(plan, Plan)]
        runs = iter(self.sandbox.map_in_turn(sequences))
        return [
            plan if isinstance(plan, Verdict) else self._judge(plan, next(runs)) for plan in plans
        ]

    def close(self) -> None:
        """Stop the sandbox this verifier made (a given sandbox is left to its owner)."""
        if hasattr(self, "_finalizer"):
            self._finalizer()

    def __enter__(self) -> "CodeVerifier":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _collect(self, suites: list[CodeTests]) -> dict[tuple[str, str], str]:
        """Collect each test file not yet seen, all in parallel, with no candidate (see
        `code/items.py`); keep the test ids, or why the file gives none. A collection run the
        sandbox itself failed is not the file's fault: it is returned for this batch only (its
        answers score 0 as a sandbox error) and tried again next time."""
        failed: dict[tuple[str, str], str] = {}
        keys = dict.fromkeys((t.style, t.tests[0]) for t in suites)
        todo = [key for key in keys if key not in self._collected]
        jobs = [
            Job({"mode": "collect", "style": style}, secret=json.dumps({"module": text}).encode())
            for style, text in todo
        ]
        for key, run in zip(todo, self.sandbox.map(jobs)):
            found = read_collection(run)
            if found is None:
                failed[key] = f"the collection run failed: {run.error}"
                continue
            if len(self._collected) >= COLLECTED_KEPT:
                self._collected.pop(next(iter(self._collected)))
            self._collected[key] = found
        return failed

    def _plan(self, response: str, tests: CodeTests, failed: dict[tuple[str, str], str]) -> Verdict | "Plan":
        """The runs that check `response`, or a Verdict when there is nothing to run."""
        if len(response) > self.max_chars:
            return Verdict(0.0, f"response too long ({len(response)} chars)", ("no_code",))
        code = extract_code(response, self.extract)
        if not code.strip():
            return Verdict(0.0, "no code found", ("no_code",))
        ids: tuple[str, ...] | str = ()
        if tests.style in MODULE_STYLES:  # a test file: its collected test ids
            key = (tests.style, tests.tests[0])
            if key in failed:
                return Verdict(0.0, failed[key], ("sandbox_error",))
            ids = self._collected[key]
        if isinstance(ids, str):
            return Verdict(0.0, f"the tests cannot be collected: {ids}", ("tests_not_collected",))
        program = tests.program_prefix + code
        return plan_runs(tests, program, self.sandbox.limits, ids, self.isolate_tests)

    def _judge(self, plan: "Plan", runs: list[Execution | None]) -> Verdict:
        outcomes: list[Outcome] = [(None, "")] * plan.count
        tampered = False
        for group, run in zip(plan.groups, runs):
            if run is None:
                budget = self.sandbox.limits.wall_s
                found = [(None, f"not run: the answer's {budget} s (wall_s) were spent")] * len(group)
            else:
                found, tampered_here = self._outcomes(plan.tests, group, run)
                tampered = tampered or tampered_here
            for index, outcome in zip(group, found):
                outcomes[index] = outcome
        return verdict_from(outcomes, [run for run in runs if run is not None], tampered)

    def _outcomes(self, tests: CodeTests, group: tuple[int, ...], run: Execution):
        if tests.style == "stdio":
            return [self._stdio_outcome(tests.tests[i].stdout, run) for i in group], False
        if tests.style == "call":
            cases = [tests.tests[i] for i in group]
            return call_outcomes(cases, run, self.rel_tol, self.abs_tol)
        return check_outcomes(len(group), run)

    def _stdio_outcome(self, expected: str, run: Execution) -> tuple[bool | None, str]:
        if run.error is not None or run.timed_out or run.output_limited:
            return None, "did not finish"
        if run.exit_code != 0:
            return False, f"exit code {run.exit_code}"
        if outputs_match(run.stdout.decode(errors="replace"), expected, self.comparison):
            return True, "passed"
        return False, "wrong output"


COLLECTED_KEPT = 4096  # test files whose collection is remembered (a GRPO group shares one)


@dataclass(frozen=True)
class Plan:
    """The runs of one answer: `jobs[k]` runs the tests numbered `groups[k]` (one each, unless
    `isolate_tests` is off); `count` tests in all."""

    tests: CodeTests
    count: int
    groups: list[tuple[int, ...]]
    jobs: list[Job]


def plan_runs(
    tests: CodeTests, program: str, limits: Limits, ids: tuple[str, ...], isolate_tests: bool = True
) -> Plan:
    """One sandbox job per test (per stdio case, call case, check function or collected test
    id); with `isolate_tests=False`, one job for all of them (stdio: always one per case)."""
    count = len(ids) if tests.style in MODULE_STYLES else len(tests.tests)
    if tests.style == "stdio" or isolate_tests:
        groups = [(index,) for index in range(count)]
        wall_s = None  # each test: test_wall_s, within the answer's wall_s
    else:
        groups, wall_s = [tuple(range(count))], limits.wall_s
    call_timeout_s = min(limits.test_wall_s, limits.wall_s) if wall_s is None else limits.wall_s
    header = {"code": program, "entry_point": tests.entry_point, "call_timeout_s": call_timeout_s}
    jobs = [_job(tests, header, group, ids, wall_s) for group in groups]
    return Plan(tests, count, groups, jobs)


def _job(tests: CodeTests, header: dict, group: tuple[int, ...], ids, wall_s) -> Job:
    if tests.style == "stdio":
        return Job.python(header["code"], tests.tests[group[0]].stdin.encode())
    if tests.style == "call":
        cases = [
            {"args": encode_value(list(c.args)), "kwargs": encode_value(dict(c.kwargs))}
            for c in (tests.tests[i] for i in group)
        ]
        return Job({**header, "mode": "call", "cases": cases}, wall_s=wall_s)
    if tests.style == "assert":
        chosen = [tests.tests[i] for i in group]
        secret = {"tests": chosen, "helpers": tests.test_helpers}
        return Job({**header, "mode": "check"}, secret=json.dumps(secret).encode(), wall_s=wall_s)
    secret = {"module": tests.tests[0], "ids": [ids[i] for i in group]}
    module_header = {**header, "mode": "module", "style": tests.style, "module": "solution"}
    return Job(module_header, secret=json.dumps(secret).encode(), wall_s=wall_s)
