"""The demo recipe in bfloat16 with and without the fp32 master weights: held-out accuracy and
seconds per step, in the same process, same seeds.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/master_weights.py [--steps 150] [--seeds 0,1]

Each run trains the shipped tiny model from `recipes/demo.toml` with `model.dtype = "bfloat16"`
and `model.master_weights` = "fp32" or "none" (float32 as a third, reference arm), then reports
greedy accuracy on 200 held-out problems at the end and the mean wall seconds of a training step
(`time/step_s`, generation included) and of its training part (forward, backward, optimizer). Prints one markdown table.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ARMS = {"bf16_fp32_master": ["model.dtype=bfloat16", "model.master_weights=fp32"],
        "bf16_no_master": ["model.dtype=bfloat16", "model.master_weights=none"],
        "float32": ["model.dtype=float32"]}


def run(arm: str, seed: int, steps: int, root: Path) -> tuple[float, float, float]:
    """(final held-out accuracy, mean seconds of a whole step, of its forward+backward+optimizer)."""
    from rlvr.config import load_config
    from rlvr.orchestrate import train

    config = load_config(REPO / "recipes" / "demo.toml", [
        f"run.output_dir={root}", f"run.name={arm.replace(' ', '_')}-{seed}", f"run.seed={seed}",
        f"train.steps={steps}", f"eval.every={steps}", "eval.size=200", "log.progress=none",
        "checkpoint.every=100000", "checkpoint.every_minutes=0", "train.time_limit_s=100000", *ARMS[arm]])
    rows = train(config, eval_full=False).folder.read_metrics()
    step_s = statistics.fmean(r["time/step_s"] for r in rows if "time/step_s" in r)
    train_s = statistics.fmean(r["time/optimizer_s"] + r["time/backward_s"] + r["time/train_forward_s"] for r in rows
                               if "time/optimizer_s" in r)
    return [r["eval/accuracy"] for r in rows if "eval/accuracy" in r][-1], step_s, train_s


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--seeds", default="0,1")
    parser.add_argument("--arms", default=",".join(ARMS))
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    results = {}
    with tempfile.TemporaryDirectory() as root:
        for arm in args.arms.split(","):
            results[arm] = [run(arm, seed, args.steps, Path(root)) for seed in seeds]
            print(arm, results[arm], flush=True)
    base = [statistics.fmean(r[i] for r in results["bf16_no_master"]) for i in (1, 2)]
    print(f"\n{args.steps} steps, seeds {seeds}\n")
    print("| arm | held-out accuracy per seed | mean | s/step (ratio) | train s/step (ratio) |\n|---|---|---|---|---|")
    for arm, rs in results.items():
        step, tr = (statistics.fmean(r[i] for r in rs) for i in (1, 2))
        print(f"| {arm} | {', '.join(f'{r[0]:.1%}' for r in rs)} | {statistics.fmean(r[0] for r in rs):.1%} | "
              f"{step:.3f} ({step / base[0]:.2f}x) | {tr:.3f} ({tr / base[1]:.2f}x) |")


if __name__ == "__main__":
    main()
