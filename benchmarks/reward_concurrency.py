"""A training step with a 50 ms reward function, scored on N = 1, 4, 16 thread workers
(`reward.score_workers`), interleaved round by round in one process on the GRPO recipe
(8 prompts x 8 completions = 64 reward calls a step). Reports the median `time/step_s` and
`time/score_s` of each N and the ratios against N = 1, and checks that every N logged the
same rewards as N = 1 (the same seed: scoring order does not change the numbers).

    OMP_WAIT_POLICY=PASSIVE python benchmarks/reward_concurrency.py [--rounds 2] [--steps 3]
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # slow_reward

from rlvr.config import load_config  # noqa: E402
from rlvr.orchestrate import train  # noqa: E402


def one_run(out: Path, name: str, workers: int, steps: int) -> list[dict]:
    config = load_config(HERE.parent / "recipes" / "grpo.toml", [
        f"run.output_dir={out}", f"run.name={name}", f"train.steps={steps}", "eval.size=0", "log.progress=none",
        "sampling.prompts_per_step=8", "sampling.group_size=8", "reward.function=slow_reward:fifty_ms",
        f"reward.score_workers={workers}"])
    train(config)
    return [json.loads(line) for line in (out / name / "metrics.jsonl").read_text().splitlines()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--workers", default="1,4,16")
    args = ap.parse_args()
    ns = [int(n) for n in args.workers.split(",")]
    step_s = {n: [] for n in ns}
    score_s = {n: [] for n in ns}
    rewards = {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for n in ns:
                lines = one_run(Path(tmp), f"r{r}_n{n}", n, args.steps)
                step_s[n] += [m["time/step_s"] for m in lines[1:]]  # the first step warms up
                score_s[n] += [m["time/score_s"] for m in lines[1:]]
                rewards[n] = [m["reward/mean"] for m in lines]
    base_step, base_score = statistics.median(step_s[ns[0]]), statistics.median(score_s[ns[0]])
    for n in ns:
        step, score = statistics.median(step_s[n]), statistics.median(score_s[n])
        print(f"N={n:3d}: step {step:.3f} s ({base_step / step:.2f}x), score {score:.3f} s "
              f"({base_score / score:.2f}x), rewards equal to N={ns[0]}: {rewards[n] == rewards[ns[0]]}")
    print("load:", open("/proc/loadavg").read().strip())


if __name__ == "__main__":
    main()
