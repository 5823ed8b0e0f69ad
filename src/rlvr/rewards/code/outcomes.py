"""What the sandbox runs of one answer said, read test by test, and the verdict made of it.

Nothing a run printed counts; only records on the results channel (which only the checker, or
in call style the harness in the candidate's process, writes) and the parent's own
comparisons. See `code/verifier.py`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from rlvr.rewards.code.codec import decode_value
from rlvr.rewards.code.tests import CallCase, values_match
from rlvr.rewards.sandbox import Execution
from rlvr.rewards.verdict import Verdict


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
    cases: list[CallCase], run: Execution, rel_tol: float, abs_tol: float
) -> tuple[list[Outcome], bool]:
    """Compare each returned value (decoded here, strictly) with its expected value."""
    records = read_records(run.results, "case", len(cases))
    outcomes: list[Outcome] = []
    for index, case in enumerate(cases):
        record = records.by_index.get(index)
        if record is None:
            why = (
                f"the program failed to load: {records.load_error}"
                if records.load_error
                else missing(run)
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
            outcomes.append((None, missing(run)))
        else:
            passed = record.get("passed") is True if record.get("ran", True) else None
            outcomes.append((passed, str(record.get("detail", ""))[:200]))
    return outcomes, records.tampered


def missing(run: Execution) -> str:
    """Why a test of `run` left no record."""
    if run.timed_out:
        return f"no result: timed out after {run.wall_s:.1f} s"
    if run.output_limited:
        return "no result: output limit"
    return "no result" if run.exit_code in (0, None) else f"no result (exit code {run.exit_code})"


def read_collection(run: Execution) -> tuple[str, ...] | str | None:
    """The test ids a "collect" run found, or why it found none (None: the run itself failed,
    which is not the file's fault and is not kept)."""
    for line in run.results.decode(errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        ids = record.get("collected") if type(record) is dict else None
        if type(ids) is list and ids and all(type(i) is str for i in ids):
            return tuple(ids)
        if type(record) is dict and type(record.get("collect_error")) is str:
            return record["collect_error"][:500]
    if run.error is not None:
        return None
    if run.timed_out:
        return f"collecting the tests timed out after {run.wall_s:.1f} s"
    return f"the collection run ended with exit code {run.exit_code} and no result"


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
