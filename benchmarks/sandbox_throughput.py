"""Sandbox executions per second: a fresh sandbox per run against a warm one that forks.

    python benchmarks/sandbox_throughput.py [--runs 100] [--rounds 3] [--workers 2] [--out FILE]

Programs: "trivial" (`pass`) and "typical" (imports, a prime sieve, a sort and a JSON round
trip: about what a model-written solution with its tests costs). Modes, all with `--workers`
runs in flight at once:

- bare:  `bwrap <rlvr's sandbox arguments> python -I -S -c CODE` per run, no harness: the
         issue's baseline (a fresh bubblewrap sandbox and interpreter for every run), at its
         cheapest (-S: no site import).
- bare+site: the same with the site import (plain `python -I`), as a naive runner would.
- fresh: rlvr's fresh mode (the same, plus the harness: rlimits, own uid, output caps).
- warm:  rlvr's warm mode: one sandbox per worker, its interpreter forks each run into new
         pid, mount, network and IPC namespaces with a private scratch tmpfs and its own uid.

Also "verify": `CodeVerifier` checks per second of a right answer to three tests, in warm
mode, as an assert-style suite (three `check(candidate)` functions) and as a pytest file
(three test functions), each in two modes: "per-test" (the verifier's: one sandbox run, with a
checker and a candidate process, per test) and "whole-file" (`isolate_tests=False`: one run
for all three, as before). "per-test overhead" is what each extra run costs an answer:
(workers / per-test rate - workers / whole-file rate) / (tests - 1), in ms of a worker's time.

The machine may be shared, so the modes take turns: each round runs every mode once (about a
second each), a ratio is computed within each round, and medians over rounds are reported.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from rlvr.rewards.code.tests import CodeTests
from rlvr.rewards.code.verifier import CodeVerifier
from rlvr.rewards.sandbox import Job, Limits, Sandbox, bwrap_unavailable
from rlvr.rewards.sandbox.plan import SANDBOX_ENV, Plan, python_executable

PROGRAMS = {
    "trivial": "pass\n",
    "typical": (
        "import collections, itertools, json, re\n"
        "n = 20000\nsieve = bytearray([1]) * n\nsieve[:2] = b'\\x00\\x00'\n"
        "for i in range(2, int(n ** 0.5) + 1):\n"
        "    if sieve[i]:\n        sieve[i * i :: i] = bytearray(len(sieve[i * i :: i]))\n"
        "primes = [i for i, p in enumerate(sieve) if p]\n"
        "data = sorted(primes, key=lambda p: (p % 7, -p))\n"
        "assert json.loads(json.dumps(data)) == data\n"
        "print(len(primes), collections.Counter(p % 10 for p in primes).most_common(1))\n"
    ),
}
ANSWER = "def add(a, b):\n    return a + b\n"
SUITES = {
    "assert": CodeTests(
        "assert",
        tuple(f"def check(candidate):\n    assert candidate({i}, 1) == {i + 1}\n" for i in range(3)),
        "add",
    ),
    "pytest": CodeTests(
        "pytest",
        (
            "from solution import add\n"
            + "".join(f"def test_{i}():\n    assert add({i}, 1) == {i + 1}\n" for i in range(3)),
        ),
    ),
}
TEST_COUNT = 3
LIMITS = Limits(wall_s=20, cpu_s=20)


def rate(run_one, runs: int, workers: int) -> float:
    """Runs per second of `run_one(i)` over `runs` calls, `workers` at a time."""
    start = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        outcomes = list(pool.map(run_one, range(runs)))
    elapsed = time.perf_counter() - start
    if not all(outcomes):
        raise RuntimeError("a benchmark run failed; the rate would be meaningless")
    return runs / elapsed


def bare_runner(code: str, site: bool = False):
    python = [python_executable(), "-I", *([] if site else ["-S"]), "-c", code]
    argv = Plan("bwrap", False, os.geteuid() == 0, python_executable()).argv(python, LIMITS)
    return lambda _: subprocess.run(argv, env=SANDBOX_ENV, capture_output=True).returncode == 0


def sandbox_runner(sandbox: Sandbox, code: str):
    return lambda _: sandbox.run(Job.python(code)).exit_code == 0


def measure(args: argparse.Namespace) -> dict:
    """Rates per (program, mode) and per round; the modes alternate within each round."""
    rates: dict[str, list[float]] = {}
    with (
        Sandbox(LIMITS, workers=args.workers, mode="fresh") as fresh,
        Sandbox(LIMITS, workers=args.workers, mode="warm") as warm,
        CodeVerifier(limits=LIMITS, workers=args.workers, mode="warm") as per_test,
        CodeVerifier(
            limits=LIMITS, workers=args.workers, mode="warm", isolate_tests=False
        ) as whole_file,
    ):
        warm.map([Job.python("pass")] * args.workers)  # start the zygotes outside the timing
        for _ in range(args.rounds):
            for name, code in PROGRAMS.items():
                for mode, runner in (
                    ("bare", bare_runner(code)),
                    ("bare+site", bare_runner(code, site=True)),
                    ("fresh", sandbox_runner(fresh, code)),
                    ("warm", sandbox_runner(warm, code)),
                ):
                    rates.setdefault(f"{name}/{mode}", []).append(
                        rate(runner, args.runs, args.workers)
                    )
            for suite, tests in SUITES.items():
                for mode, verifier in (("per-test", per_test), ("whole-file", whole_file)):
                    verify = lambda _, v=verifier, t=tests: v(ANSWER, t).score == 1.0  # noqa: E731
                    rates.setdefault(f"verify-{suite}/{mode}", []).append(
                        rate(verify, args.runs, args.workers)
                    )
        isolation = {"fresh": fresh.isolation.describe(), "warm": warm.isolation.describe()}
    return {"rates": rates, "isolation": isolation}


def summarize(measured: dict) -> dict[str, tuple[float, list[float]]]:
    """Median and per-round values of each rate, and of warm's ratio to each other mode."""
    rates = dict(measured["rates"])
    for name in PROGRAMS:
        for base in ("bare", "bare+site", "fresh"):
            rates[f"{name}: warm / {base}"] = [
                w / b for w, b in zip(rates[f"{name}/warm"], rates[f"{name}/{base}"])
            ]
    workers = measured["args"]["workers"]
    for suite in SUITES:
        per, whole = rates[f"verify-{suite}/per-test"], rates[f"verify-{suite}/whole-file"]
        rates[f"verify-{suite}: per-test / whole-file"] = [p / w for p, w in zip(per, whole)]
        rates[f"verify-{suite}: per-test overhead ms"] = [
            1000 * (workers / p - workers / w) / (TEST_COUNT - 1) for p, w in zip(per, whole)
        ]
    return {key: (statistics.median(values), values) for key, values in rates.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=40, help="runs per mode and round")
    parser.add_argument(
        "--rounds",
        type=int,
        default=8,
        help="rounds; more, shorter rounds follow a shared machine better",
    )
    parser.add_argument("--workers", type=int, default=2, help="runs in flight at once")
    parser.add_argument("--out", help="write the figures as JSON here")
    args = parser.parse_args()
    why_not = bwrap_unavailable()
    if why_not:
        sys.exit(f"bubblewrap cannot sandbox here: {why_not}")
    measured = {**measure(args), "args": vars(args)}
    summary = summarize(measured)
    print(
        f"{os.cpu_count()} CPUs, {platform.python_version()}, {args.workers} workers, "
        f"{args.runs} runs x {args.rounds} rounds per mode"
    )
    for key, (median, values) in summary.items():
        unit = "ms    " if key.endswith(" ms") else "x     " if ":" in key else "runs/s"
        print(f"  {key:<42} {median:7.1f} {unit}  rounds: {' '.join(f'{v:.1f}' for v in values)}")
    for mode, text in measured["isolation"].items():
        print(f"  isolation, {mode}: {text}")
    if args.out:
        with open(args.out, "w") as handle:
            medians = {key: median for key, (median, _) in summary.items()}
            json.dump({"medians": medians, **measured}, handle, indent=2)


if __name__ == "__main__":
    main()
