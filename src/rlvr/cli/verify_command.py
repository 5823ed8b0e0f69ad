"""`rlvr verify`: score a jsonl of {"prompt", "response", "gold"} rows with one verifier.

Bad rows are all reported, never only the first: rows that are not a JSON object with string
"prompt" and "response" and a "gold" are listed as FILE:LINE before anything is scored, and the
command exits 2 (one `rlvr: error:` message, no traceback). A gold the verifier rejects while
scoring (a RewardError, e.g. a malformed instruction constraint) is reported the same way after
the table and summary of the good rows, and also exits 2. A non-string gold (a list of
constraints, a code-test object, a number) is passed to the verifier as its JSON text.

The verifier is built as training builds it (`rlvr.rewards.build`): `--option KEY=VALUE` sets a
[reward] key (`template`, `extract`, `math_timeout_s`, `format_strict`, ...), and every key not
set keeps the default a run uses.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from rlvr.tasks.jsonl import json_object, read_lines
from rlvr.errors import ConfigError, DatasetError, RewardError

HELP = 'score {"prompt","response","gold"} rows of a jsonl with a verifier; table and summary'
MAX_LISTED = 20


def add_parser(sub: argparse._SubParsersAction) -> None:
    ve = sub.add_parser("verify", help=HELP, description=HELP + ". See docs/rewards.md.")
    ve.add_argument("data", type=Path, help="jsonl file, one {prompt, response, gold} object a line")
    ve.add_argument("--verifier", required=True, help="math, exact, format, code or instructions")
    ve.add_argument("--option", dest="options", action="append", default=[], metavar="KEY=VALUE",
                    help="a [reward] key as in a recipe, VALUE read as JSON if it parses, else as text "
                         "(repeatable), e.g. --option template=boxed --option format_strict=true")
    ve.add_argument("--out", type=Path, metavar="RESULTS.jsonl", help="write one scored row per input row")
    ve.add_argument("--show", type=int, default=20, help="rows shown in the table (default 20)")


@dataclass(frozen=True)
class Row:
    line: int
    prompt: str
    response: str
    gold: str


REQUIRED = ("prompt", "response", "gold")
ALLOWED = {*REQUIRED, "id", "meta"}


def parse_row(text: str) -> tuple[Row | None, str | None]:
    """One jsonl line as a Row, or the problem with it."""
    try:
        data = json_object(text, "", REQUIRED, ALLOWED)
    except DatasetError as e:
        return None, str(e).removeprefix(": ")
    wrong = [key for key in ("prompt", "response") if not isinstance(data[key], str)]
    if wrong:
        return None, f"{wrong} must be strings"
    gold = data["gold"] if isinstance(data["gold"], str) else json.dumps(data["gold"])
    return Row(0, data["prompt"], data["response"], gold), None


def listed(path: Path, problems: list[tuple[int, str]]) -> str:
    lines = [f"  {path}:{line}: {problem}" for line, problem in problems[:MAX_LISTED]]
    more = [f"  ... and {len(problems) - MAX_LISTED} more"] if len(problems) > MAX_LISTED else []
    return "\n".join(lines + more)


def read_rows(path: Path) -> list[Row]:
    """Every non-blank line as a Row; DatasetError listing every bad line (FILE:LINE) if any."""
    if not path.is_file():
        raise DatasetError(f"{path}: no such file")
    rows, problems = [], []
    for text, where in read_lines(path, "input"):  # bad UTF-8: file, line and byte offset
        number = int(where.rsplit(":", 1)[1])
        row, problem = parse_row(text)
        if problem:
            problems.append((number, problem))
        else:
            rows.append(Row(number, row.prompt, row.response, row.gold))
    if problems:
        raise DatasetError(f"{path}: {len(problems)} malformed row(s), nothing scored\n"
                           + listed(path, problems))
    if not rows:
        raise DatasetError(f"{path}: no rows")
    return rows


def parse_options(options: list[str]) -> dict[str, object]:
    parsed = {}
    for option in options:
        key, sep, value = option.partition("=")
        if not sep or not key:
            raise ConfigError(f"--option {option!r}: expected KEY=VALUE")
        try:
            parsed[key] = json.loads(value)
        except json.JSONDecodeError:
            parsed[key] = value
    return parsed


def build_verifier(name: str, options: dict[str, object]):
    """The verifier training would build from a [reward] section with these keys set."""
    from rlvr.rewards.build import VERIFIER_OPTIONS, build_verifier, reward_section

    if name not in VERIFIER_OPTIONS:
        raise ConfigError(f"--verifier {name!r}: expected one of {sorted(VERIFIER_OPTIONS)}")
    section = reward_section(name, options)
    try:
        return build_verifier(name, section)
    except ValueError as e:  # the verifier's own check of its options
        raise ConfigError(f"--verifier {name} with options {options}: {e}") from None


@dataclass(frozen=True)
class Result:
    row: Row
    score: float
    reason: str
    flags: tuple[str, ...]
    seconds: float


def score_rows(verifier, rows: list[Row]) -> tuple[list[Result], list[tuple[int, str]]]:
    """Each row's verdict and check time; a gold the verifier rejects is a bad row, not a crash."""
    from rlvr.rewards.calling import call_reward

    results, rejected = [], []
    for row in rows:
        start = time.perf_counter()
        try:
            verdict = call_reward(verifier, row.response, row.gold, row.prompt)
        except RewardError as e:  # deliberate: one bad gold must not hide the other rows' scores
            rejected.append((row.line, f"gold rejected: {e}"))
            continue
        results.append(Result(row, float(verdict.score), verdict.reason, tuple(verdict.flags),
                              time.perf_counter() - start))
    return results, rejected


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def print_table(results: list[Result], show: int) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(show_lines=False)
    for column, justify in (("line", "right"), ("prompt", "left"), ("response", "left"),
                            ("score", "right"), ("reason", "left"), ("flags", "left")):
        table.add_column(column, justify=justify, overflow="ellipsis")
    for r in results[:show]:
        table.add_row(str(r.row.line), _cut(r.row.prompt, 30), _cut(r.row.response, 30),
                      f"{r.score:.3g}", _cut(r.reason, 50), ",".join(r.flags))
    console = Console()
    console.print(table)
    if len(results) > show:
        console.print(f"({len(results) - show} more rows not shown; --show N or --out FILE)")


def summary(results: list[Result]) -> dict[str, object]:
    """Mean score, pass rate (score == 1), flag counts and mean seconds per check."""
    n = len(results)
    return {
        "rows": n,
        "mean_score": sum(r.score for r in results) / n if n else 0.0,
        "pass_rate": sum(r.score >= 1.0 for r in results) / n if n else 0.0,
        "flags": dict(sorted(Counter(f for r in results for f in r.flags).items())),
        "seconds_per_check": sum(r.seconds for r in results) / n if n else 0.0,
    }


def print_summary(stats: dict[str, object], rejected: int) -> None:
    flags = ", ".join(f"{k} {v}" for k, v in stats["flags"].items()) or "none"
    print(f"{stats['rows']} rows scored" + (f", {rejected} rejected" if rejected else "")
          + f": mean score {stats['mean_score']:.3f}, pass rate {stats['pass_rate']:.3f}, "
          f"{1000 * stats['seconds_per_check']:.2f} ms per check")
    print(f"flags: {flags}")


def write_results(path: Path, results: list[Result]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for r in results:
            f.write(json.dumps({"line": r.row.line, "prompt": r.row.prompt, "response": r.row.response,
                                "gold": r.row.gold, "score": r.score, "reason": r.reason,
                                "flags": list(r.flags), "seconds": r.seconds}) + "\n")


def run_verify(args: argparse.Namespace) -> int:
    if args.show < 0:
        raise ConfigError(f"--show must be >= 0, got {args.show}")
    rows = read_rows(args.data)
    verifier = build_verifier(args.verifier, parse_options(args.options))
    results, rejected = score_rows(verifier, rows)
    print_table(results, args.show)
    print_summary(summary(results), len(rejected))
    if args.out is not None:
        write_results(args.out, results)
        print(f"results: {args.out}")
    if rejected:
        raise DatasetError(f"{args.data}: {len(rejected)} row(s) with a gold the verifier rejects\n"
                           + listed(args.data, rejected))
    return 0
