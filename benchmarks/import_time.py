"""Import time of the reward verifiers (no torch) against a module that loads torch, in fresh
interpreters, alternating.

    python benchmarks/import_time.py [--runs 5]

Each figure is the wall time of one `import` statement inside a new `python` process (the
interpreter's own start-up is not counted), median over `--runs` processes per statement;
the statements run in turns (A, B, A, B, ...), so the machine's drift spreads over both.
docs/rewards.md quotes it: `rlvr verify` and a reward server import only the verifiers.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

STATEMENTS = {
    "verifiers": "from rlvr.rewards import MathVerifier",
    "trainer (torch)": "import rlvr.train.trainer",
}
PROBE = ("import sys, time; t = time.perf_counter(); exec(sys.argv[1]); "
         "print(time.perf_counter() - t, 'torch' in sys.modules)")


def one(statement: str) -> tuple[float, bool]:
    """(seconds, torch loaded?) of `statement` in a fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[1] / "src"),
                                                                       os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-c", PROBE, statement], env=env, capture_output=True, text=True, check=True)
    seconds, torch_loaded = out.stdout.split()
    return float(seconds), torch_loaded == "True"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    load0 = os.getloadavg()[0]
    times: dict[str, list[float]] = {name: [] for name in STATEMENTS}
    torch_loaded: dict[str, bool] = {}
    for _ in range(args.runs):
        for name, statement in STATEMENTS.items():
            seconds, torch_loaded[name] = one(statement)
            times[name].append(seconds)
    med = {name: statistics.median(t) for name, t in times.items()}
    a, b = STATEMENTS
    print(json.dumps({"median_s": med, "runs": times, "torch_loaded": torch_loaded,
                      "ratio": med[b] / med[a], "load": [load0, os.getloadavg()[0]]}, indent=1))
    print(f"{a}: {med[a]:.2f} s (torch loaded: {torch_loaded[a]}); {b}: {med[b]:.2f} s "
          f"(torch loaded: {torch_loaded[b]}); {b} / {a} = {med[b] / med[a]:.1f}")


if __name__ == "__main__":
    main()
