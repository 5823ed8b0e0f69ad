"""Reward for code: run the answer against its tests in the sandbox; score = share passed.

A test counts as passed only when a record saying so arrives through a channel the model's
code cannot write (assert style: the separate checker process) or when the parent itself
finds the returned value or printed output equal to the expected one (call and stdio styles:
the expected values never enter the sandbox). Exit codes, exceptions, printed runner output
and missing records never count. See `code_harness.py` for the argument in full and
docs/reward-hacks.md for the attacks this stops.
"""

from __future__ import annotations

import json
import re
import weakref
from dataclasses import dataclass, field
from typing import Sequence

from rlvr.rewards.code_harness import decode_value, encode_value
from rlvr.rewards.code_tests import COMPARISONS, CodeTests, outputs_match, values_match
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

    `gold` is a `CodeTests` or its JSON text (see `code_tests.py`). Runs go through a
    `Sandbox` (one is made from `limits`, `workers`, `mode`, `isolation`, `allow_unisolated`
    unless `sandbox` is given; it raises SandboxUnavailable here, not at the first answer).

        verifier = CodeVerifier(limits=Limits(wall_s=5))
        verifier("```python\\ndef add(a, b):\\n    return a + b\\n```",
                 '{"style": "call", "entry_point": "add", '
                 '"tests": [{"args": [1, 2], "expected": 3}]}')
        # Verdict(score=1.0, reason='1/1 tests passed', flags=())

    Flags: "no_code", "tests_not_run" (some test left no result), "timeout", "output_limit",
    "tampered" (malformed or repeated records), "sandbox_error" (the sandbox failed, not the code).
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

    def __call__(self, *, response: str, gold: "str | CodeTests") -> Verdict:
        """Check one answer; see the class docstring."""
        return self.score_many([(response, gold)])[0]

    def score_many(self, pairs: Sequence[tuple[str, "str | CodeTests"]]) -> list[Verdict]:
        """Check many answers, all their runs in parallel on the sandbox pool."""
        plans = [self._plan(response, CodeTests.parse(gold)) for response, gold in pairs]
        jobs = [job for plan in plans if not isinstance(plan, Verdict) for job in plan[1]]
        runs = iter(self.sandbox.map(jobs))
        verdicts = []
        for plan in plans:
            if isinstance(plan, Verdict):
                verdicts.append(plan)
                continue
            tests, jobs_of_plan = plan
            verdicts.append(self._judge(tests, [next(runs) for _ in jobs_of_plan]))
        return verdicts

    def close(self) -> None:
        """Stop the sandbox this verifier made (a given sandbox is left to its owner)."""
        if hasattr(self, "_finalizer"):
            self._finalizer()

    def __enter__(self) -> "CodeVerifier":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _plan(self, response: str, tests: CodeTests) -> Verdict | tuple[CodeTests, list[Job]]:
        """The jobs that check `response`, or a Verdict when there is nothing to run."""
        if len(response) > self.max_chars:
            return Verdict(0.0, f"response too long ({len(response)} chars)", ("no_code",))
        code = extract_code(response, self.extract)
        if not code.strip():
            return Verdict(0.0, "no code found", ("no_code",))
        return tests, build_jobs(tests, tests.program_prefix + code, self.sandbox.limits.wall_s)

    def _judge(self, tests: CodeTests, runs: list[Execution]) -> Verdict:
        tampered = False
        if tests.style == "stdio":
            outcomes = [
                self._stdio_outcome(case.stdout, run) for case, run in zip(tests.tests, runs)
            ]
        elif tests.style == "call":
            outcomes, tampered = call_outcomes(tests, runs[0], self.rel_tol, self.abs_tol)
        else:
            outcomes, tampered = check_outcomes(len(tests.tests), runs[0])
        return verdict_from(outcomes, runs, tampered)

    def _stdio_outcome(self, expected: str, run: Execution) -> tuple[bool | None, str]:
        if run.error is not None or run.timed_out or run.output_limited:
            return None, "did not finish"
        if run.exit_code != 0:
            return False, f"exit code {run.exit_code}"
        if outputs_match(run.stdout.decode(errors="replace"), expected, self.comparison):
            return True, "passed"
        return False, "wrong output"


def build_jobs(tests: CodeTests, program: str, call_timeout_s: float) -> list[Job]:
    """The sandbox jobs for one answer: one per stdio case, else one for all its tests."""
    if tests.style == "stdio":
        return [Job.python(program, case.stdin.encode()) for case in tests.tests]
    header = {"code": program, "entry_point": tests.entry_point}
    if tests.style == "call":
        cases = [
            {"args": encode_value(list(c.args)), "kwargs": encode_value(dict(c.kwargs))}
            for c in tests.tests
        ]
        return [Job({**header, "mode": "call", "cases": cases})]
    secret = json.dumps({"tests": list(tests.tests), "helpers": tests.test_helpers}).encode()
    return [Job({**header, "mode": "check", "call_timeout_s": call_timeout_s}, secret=secret)]


@dataclass
class Records:
    """What the results channel said: one record per test index, and what was wrong with it.

    Attributes:
        by_index: the record of each test that has exactly one.
        tampered: some line was not a record, named no valid test, or repeated one (when two
            records claim one test, neither is believed).
        load_error: the program failed before any test (call style), in its own words.
    """

    by_index: dict[int, dict] = field(default_factory=dict)
    tampered: bool = False
    load_error: str | None = None


def read_records(results: bytes, key: str, count: int) -> Records:
    """Parse the results channel: JSON lines, each naming its test by `key` (0 .. count-1)."""
    found, repeated = Records(), set()
    for line in results.decode(errors="replace").splitlines():
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            record = None
        if type(record) is dict and "load_error" in record:
            found.load_error = str(record["load_error"])[:200]
            continue
        index = record.get(key) if type(record) is dict else None
        if type(index) is not int or not 0 <= index < count:
            found.tampered = True
            continue
        if index in found.by_index:
            repeated.add(index)
        found.by_index[index] = record
    for index in repeated:
        del found.by_index[index]
    found.tampered = found.tampered or bool(repeated)
    return found


Outcome = tuple["bool | None", str]  # passed (None: never ran), detail


def call_outcomes(
    tests: CodeTests, run: Execution, rel_tol: float, abs_tol: float
) -> tuple[list[Outcome], bool]:
    """Compare each returned value (decoded here, strictly) with its expected value."""
    records = read_records(run.results, "case", len(tests.tests))
    outcomes: list[Outcome] = []
    for index, case in enumerate(tests.tests):
        record = records.by_index.get(index)
        if record is None:
            why = (
                f"the program failed to load: {records.load_error}"
                if records.load_error
                else "no result"
            )
            outcomes.append((None, why))
        elif "value" not in record:
            outcomes.append((False, str(record.get("error", "no value"))[:200]))
        else:
            outcomes.append(_compare(record["value"], case.expected, rel_tol, abs_tol))
    return outcomes, records.tampered


def _compare(encoded: object, expected: object, rel_tol: float, abs_tol: float) -> Outcome:
    try:
        got = decode_value(encoded)
    except (ValueError, TypeError, RecursionError):
        return False, "undecodable value"
    if values_match(got, expected, rel_tol, abs_tol):
        return True, "passed"
    return False, f"returned {repr(got)[:80]}, expected {repr(expected)[:80]}"


def check_outcomes(count: int, run: Execution) -> tuple[list[Outcome], bool]:
    """Read the checker's verdict for each assert-style test; a missing one never ran."""
    records = read_records(run.results, "test", count)
    outcomes: list[Outcome] = []
    for index in range(count):
        record = records.by_index.get(index)
        if record is None:
            outcomes.append((None, "no result"))
        else:
            passed = record.get("passed") is True if record.get("ran", True) else None
            outcomes.append((passed, str(record.get("detail", ""))[:200]))
    return outcomes, records.tampered


def verdict_from(outcomes: list[Outcome], runs: list[Execution], tampered: bool) -> Verdict:
    """Score = passed / tests; the reason names the first failure; flags say what went wrong."""
    passed = sum(1 for ok, _ in outcomes if ok is True)
    flags = [
        name
        for name, hit in (
            ("tests_not_run", any(ok is None for ok, _ in outcomes)),
            ("timeout", any(run.timed_out for run in runs)),
            ("output_limit", any(run.output_limited for run in runs)),
            ("tampered", tampered),
            ("sandbox_error", any(run.error is not None for run in runs)),
        )
        if hit
    ]
    reason = f"{passed}/{len(outcomes)} tests passed"
    failure = next(((i, detail) for i, (ok, detail) in enumerate(outcomes) if ok is not True), None)
    if failure is not None:
        reason += f"; test {failure[0]}: {failure[1]}"
    errors = [run.error for run in runs if run.error]
    if errors:
        reason += f"; sandbox error: {errors[0][:200]}"
    return Verdict(passed / len(outcomes), reason, tuple(flags))
