"""Wall time of the demo recipe for N steps, checkpointing every step vs the default schedule.

    PYTHONPATH=src python benchmarks/checkpoint_cost.py --steps 100 --repeats 2

Runs alternate (every-step, default, every-step, ...) so that load on the machine hits both.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from rlvr.config import load_config
from rlvr.orchestrate import train

REPO = Path(__file__).resolve().parents[1]


def wall_seconds(out: Path, name: str, steps: int, extra: list[str]) -> tuple[float, int]:
    config = load_config(REPO / "recipes" / "demo.toml", [f"run.output_dir={out}", f"run.name={name}",
                                                          f"train.steps={steps}", "log.progress=none", *extra])
    t0 = time.perf_counter()
    result = train(config)
    return time.perf_counter() - t0, result.steps


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    times = {"every step": [], "default": []}
    with tempfile.TemporaryDirectory() as out:
        for i in range(args.repeats):
            for label, extra in (("every step", ["checkpoint.every=1"]), ("default", [])):
                seconds, steps = wall_seconds(Path(out), f"{label.replace(' ', '_')}{i}", args.steps, extra)
                times[label].append(seconds)
                print(f"{label}: {seconds:.1f} s for {steps} steps", flush=True)
    every, default = statistics.median(times["every step"]), statistics.median(times["default"])
    print(f"median wall: every step {every:.1f} s, default {default:.1f} s, ratio {every / default:.2f}")


if __name__ == "__main__":
    main()
