"""The watchdog's cost per step on the demo recipe: runs with `run.stall_timeout_s` at its
default (on) and at 0 (off), interleaved on/off/on/off... in one process, same seed.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/watchdog_overhead.py [--rounds 4] [--steps 15]

Reports the median `time/step_s` (generation + scoring + training + weight sync) and the wall
seconds per step of the loop (`Loop._run`: checkpoints, metrics and logging included,
model loading not) of each side, their ratios on / off, and a
micro-benchmark of one stage enter + exit and one `beat()` (what a step adds: 6 stages, a beat
per decode step and per scored sample).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402

from rlvr import heartbeat  # noqa: E402
from rlvr.config import load_config  # noqa: E402
from rlvr.orchestrate import train  # noqa: E402
from rlvr.orchestrate.loop import Loop  # noqa: E402
from rlvr.orchestrate.watchdog import Watchdog  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def one_run(out: Path, name: str, steps: int, timeout_s: float) -> tuple[list[float], float]:
    config = load_config(REPO / "recipes" / "demo.toml", [
        f"run.output_dir={out}", f"run.name={name}", f"train.steps={steps}", "train.time_limit_s=100000",
        "eval.size=0", "log.progress=none", f"run.stall_timeout_s={timeout_s}"])
    result = train(config)
    return [row["time/step_s"] for row in result.folder.read_metrics()], LOOP_S.pop() / result.steps


LOOP_S: list[float] = []
_plain_run = Loop._run


def _timed_run(self, display, board) -> None:
    t0 = time.perf_counter()
    _plain_run(self, display, board)
    LOOP_S.append(time.perf_counter() - t0)


Loop._run = _timed_run  # the loop's wall time, without building the model


def micro() -> tuple[float, float]:
    """Seconds per stage enter + exit, and per beat inside a stage."""
    n = 100_000
    with Watchdog(1800, None) as wd:
        t0 = time.perf_counter()
        for i in range(n):
            with wd.stage("generate", i):
                pass
        stage_s = (time.perf_counter() - t0) / n
        with wd.stage("generate", 0):
            t0 = time.perf_counter()
            for _ in range(n):
                heartbeat.beat()
            beat_s = (time.perf_counter() - t0) / n
    return stage_s, beat_s


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--steps", type=int, default=15)
    args = ap.parse_args()
    torch.set_num_threads(2)
    sides = {"on": ([], []), "off": ([], [])}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for side, timeout in (("on", 1800.0), ("off", 0.0)) if r % 2 == 0 else (("off", 0.0), ("on", 1800.0)):
                steps, wall = one_run(Path(tmp), f"{side}{r}", args.steps, timeout)
                sides[side][0].extend(steps[1:])  # step 1 warms caches up
                sides[side][1].append(wall)
                print(f"round {r} {side:>3}: wall/step {wall:.4f} s, median time/step_s {statistics.median(steps[1:]):.4f} s",
                      flush=True)
    for side, (steps, walls) in sides.items():
        print(f"{side:>3}: median time/step_s {statistics.median(steps):.4f} s over {len(steps)} steps, "
              f"median wall/step {statistics.median(walls):.4f} s over {len(walls)} runs")
    on, off = sides["on"], sides["off"]
    print(f"ratio on/off: time/step_s {statistics.median(on[0]) / statistics.median(off[0]):.3f}, "
          f"wall/step {statistics.median(on[1]) / statistics.median(off[1]):.3f}")
    stage_s, beat_s = micro()
    print(f"one stage enter+exit {stage_s * 1e6:.2f} us, one beat {beat_s * 1e9:.0f} ns")


if __name__ == "__main__":
    main()
