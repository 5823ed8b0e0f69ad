"""What the sandbox's syscall filter costs: runs per second of the warm (and fresh) sandbox with
the filter and without it, in one process, the two taking turns round by round on the same
sandboxes (the filter is chosen per job: warm mode's roles load it, fresh mode's bwrap gets it
with `--seccomp`). Programs: "trivial" (`pass`) and "typical" (benchmarks/sandbox_throughput.py's:
imports, a sieve, a sort, a JSON round trip).

    OMP_WAIT_POLICY=PASSIVE python benchmarks/seccomp_cost.py [--runs 40] [--rounds 6] [--workers 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import types
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sandbox_throughput import LIMITS, PROGRAMS  # noqa: E402

from rlvr.rewards.sandbox import Job, Sandbox, bwrap_unavailable, plan, seccomp  # noqa: E402

FAILED: list[str] = []


def rate(pool: Sandbox, code: str, runs: int, workers: int) -> float:
    """Successful runs per second. Failures are counted, not fatal: warm mode loses about 1 run
    in 40 to "warm sandbox answered {}" with 2 workers, with or without the filter (main too)."""
    start = time.perf_counter()
    with ThreadPoolExecutor(workers) as threads:
        done = list(threads.map(lambda _: pool.run(Job.python(code)), range(runs)))
    FAILED.extend(r.error or f"exit {r.exit_code}" for r in done if r.exit_code != 0)
    return sum(r.exit_code == 0 for r in done) / (time.perf_counter() - start)

FILTER = {"on": True}
# plan.py reads `seccomp.program()` for every job; this stand-in answers None when the filter is off.
plan.seccomp = types.SimpleNamespace(program=lambda machine=None: seccomp.program() if FILTER["on"] else None)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    if bwrap_unavailable() or seccomp.program() is None:
        sys.exit(f"cannot measure here: {bwrap_unavailable() or 'no filter for this machine'}")
    rates: dict[str, list[float]] = {}
    with Sandbox(LIMITS, workers=args.workers, mode="warm") as warm, \
            Sandbox(LIMITS, workers=args.workers, mode="fresh") as fresh:
        for r in range(args.rounds):
            for name, code in PROGRAMS.items():
                for mode, pool in (("warm", warm), ("fresh", fresh)):
                    for side in (("off", "on") if r % 2 else ("on", "off")):  # alternate who goes first
                        FILTER["on"] = side == "on"
                        rates.setdefault(f"{name}/{mode}/{side}", []).append(
                            rate(pool, code, args.runs, args.workers))
    for key in sorted(k for k in rates if k.endswith("/on")):
        base = key[:-3]
        on, off = rates[key], rates[base + "/off"]
        ratio = statistics.median(a / b for a, b in zip(on, off))
        print(f"{base:<16} filter on {statistics.median(on):7.1f} runs/s, off {statistics.median(off):7.1f} "
              f"runs/s: on/off {ratio:.3f}")
    print(f"failed runs (not counted): {len(FAILED)} {sorted(set(FAILED))}")
    print(f"{os.cpu_count()} CPUs, {args.workers} workers, {args.runs} runs x {args.rounds} rounds; load",
          open("/proc/loadavg").read().strip())


if __name__ == "__main__":
    main()
