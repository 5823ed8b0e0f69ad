"""The demo recipe in bfloat16 with and without the fp32 master weights: held-out accuracy and
seconds per step, in the same process, same seeds.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/master_weights.py [--steps 150] [--seeds 0,1]
    OMP_WAIT_POLICY=PASSIVE python benchmarks/master_weights.py --fixed-batch

Each run trains the shipped tiny model from `recipes/demo.toml` with `model.dtype = "bfloat16"`
and `model.master_weights` = "fp32" or "none" (float32 as a third, reference arm), then reports
greedy accuracy on 200 held-out problems at the end and the mean wall seconds of a training step
(`time/step_s`, generation included) and of its training part (forward, backward, optimizer). Prints one markdown table.
Whole-run step times also follow what each policy generates (a weaker policy may write longer
answers), so `--fixed-batch` times the trainer alone: both arms step the same batch in turn,
30 times each, and the medians of the forward, backward and optimizer phases are printed.
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


def fixed_batch_times(repeats: int = 30) -> None:
    """Median milliseconds of each training phase, both arms interleaved on one batch."""
    import torch

    from rlvr.algo import Objective, outcome_advantages
    from rlvr.engines import HFEngine, SamplingParams
    from rlvr.engines.loading import load_model, load_tokenizer
    from rlvr.train import OptimConfig, Trainer
    from rlvr.train.batching import collate

    tiny, tokenizer = REPO / "models" / "tiny-arith", load_tokenizer(REPO / "models" / "tiny-arith")
    trainers = {arm: Trainer(load_model(tiny, "bfloat16", fp32_head=True), Objective(),
                             OptimConfig(lr=3e-5, master_weights=arm == "bf16_fp32_master"), micro_batch_size=128)
                for arm in ("bf16_fp32_master", "bf16_no_master")}
    engine = HFEngine(load_model(tiny, "bfloat16", fp32_head=True), tokenizer, seed=0)
    groups = engine.generate([f"{a}+{b}=" for a, b in zip(range(10, 26), range(40, 56))], 8,
                             SamplingParams(max_new_tokens=8))
    ids = torch.arange(16).repeat_interleave(8)
    rewards = torch.rand(128, generator=torch.Generator().manual_seed(0)).round()
    batch = collate([r for g in groups for r in g], outcome_advantages(rewards, ids, baseline="group_mean",
                                                                        scale="group_std"), ids, tokenizer.pad_token_id)
    phases = ("time/train_forward_s", "time/backward_s", "time/optimizer_s")
    seen = {arm: {p: [] for p in phases} for arm in trainers}
    for i in range(repeats + 5):
        for arm, trainer in trainers.items():
            metrics = trainer.step(batch)
            for p in phases:
                if i >= 5:  # warm-up
                    seen[arm][p].append(metrics[p])
    print("| arm | forward ms | backward ms | optimizer ms |\n|---|---|---|---|")
    for arm, times in seen.items():
        print(f"| {arm} | " + " | ".join(f"{statistics.median(times[p]) * 1e3:.1f}" for p in phases) + " |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--seeds", default="0,1")
    parser.add_argument("--arms", default=",".join(ARMS))
    parser.add_argument("--fixed-batch", action="store_true")
    args = parser.parse_args()
    if args.fixed_batch:
        return fixed_batch_times()
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
