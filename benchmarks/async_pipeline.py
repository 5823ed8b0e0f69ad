"""Sync vs async (max_staleness k = 1, 2, 4, 8; and k = 1, 2 with in-flight weight updates) on a
rollout-bound workload, same run, same seed.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/async_pipeline.py [--steps 40] [--out docs/async]

Workload: the demo model and task (recipes/demo.toml), with completions forced to
`--min-new-tokens` tokens (EOS suppressed) so that generation takes at least twice the
training time, and the reward "the completion starts with the right sum" (a function in this
file, passed as reward.function). Each mode trains the same number of steps from the same
seed; the table gives wall-clock seconds per step and the reward of the last steps, as ratios
against sync measured in the same run. Writes `table.md`, `results.json` and `async.png`.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/async_pipeline.py --exact-cost [--repeats 3]

measures only what `orchestrate.exact = true` costs: each async setting run plain and exact,
alternated, and the median of the exact / plain s/step ratios (writes `exact_cost.md`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))


def starts_with_sum(response: str, gold: str) -> float:
    """1 when the completion opens with the right sum (what follows is filler: EOS is banned)."""
    return float(response.lstrip().startswith(gold))


def run_mode(mode: str, k: int, args, out_root: Path, inflight: bool = False, exact: bool = False) -> dict:
    from rlvr.config import load_config
    from rlvr.orchestrate import train

    overrides = [f"run.output_dir={out_root}", f"run.name={mode}-k{k}-{inflight}-{exact}-{time.monotonic_ns()}", f"train.steps={args.steps}",
                 f"sampling.min_new_tokens={args.min_new_tokens}", f"sampling.prompts_per_step={args.prompts}", f"sampling.max_new_tokens={args.min_new_tokens}",
                 "reward.function=async_pipeline:starts_with_sum", "eval.size=0", "log.progress=none",
                 "train.time_limit_s=100000", "checkpoint.every=100000", "checkpoint.every_minutes=0", f"orchestrate.mode={mode}",
                 f"orchestrate.max_staleness={k}", f"orchestrate.inflight_updates={str(inflight).lower()}"]
    if mode == "async":
        overrides.append(f"orchestrate.exact={str(exact).lower()}")
    start = time.perf_counter()
    result = train(load_config(REPO / "recipes" / "demo.toml", overrides))
    wall = time.perf_counter() - start
    rows = result.folder.read_metrics()
    tail = rows[-max(1, len(rows) // 4):]
    return {"mode": mode, "k": k, "inflight": inflight, "exact": exact, "wall_s": wall, "s_per_step": wall / len(rows),
            "generate_s": statistics.median(r["time/generate_s"] for r in rows),
            "train_s": statistics.median(r["time/train_forward_s"] + r["time/backward_s"] + r["time/optimizer_s"] for r in rows),
            "reward_last_quarter": statistics.fmean(r["reward/mean"] for r in tail),
            "staleness_mean": statistics.fmean(r["async/staleness_mean"] for r in rows),
            "token_staleness_mean": statistics.fmean(r["async/token_staleness_mean"] for r in rows),
            "mixed_frac": statistics.fmean(r["async/inflight_mixed_frac"] for r in rows),
            "reward_curve": [r["reward/mean"] for r in rows],
            "elapsed": [r["time/elapsed_s"] for r in rows]}


def name_of(r: dict) -> str:
    if r["mode"] == "sync":
        return "sync"
    return f"async k={r['k']}" + (" in-flight" if r.get("inflight") else "")


def table(results: list[dict]) -> str:
    base = results[0]
    lines = ["| mode | s/step | x sync time | reward (last quarter) | x sync reward | staleness (sample / token) "
             "| samples mixing versions | gen s / train s |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {name_of(r)} | {r['s_per_step']:.3f} | {r['s_per_step'] / base['s_per_step']:.2f} | "
                     f"{r['reward_last_quarter']:.3f} | {r['reward_last_quarter'] / max(base['reward_last_quarter'], 1e-9):.2f} | "
                     f"{r['staleness_mean']:.2f} / {r['token_staleness_mean']:.2f} | {r['mixed_frac']:.2f} | "
                     f"{r['generate_s']:.3f} / {r['train_s']:.3f} |")
    return "\n".join(lines) + "\n"


def plot(results: list[dict], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for r in results:
        label = name_of(r)
        axes[0].plot(range(1, len(r["reward_curve"]) + 1), r["reward_curve"], label=label, alpha=0.8)
        axes[1].plot(r["elapsed"], r["reward_curve"], label=label, alpha=0.8)
    axes[0].set_xlabel("step")
    axes[1].set_xlabel("training wall-clock (s)")
    for ax in axes:
        ax.set_ylabel("train reward")
        ax.grid(alpha=0.3)
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(out, dpi=100)


def exact_cost(args, out_root: Path) -> str:
    """orchestrate.exact's cost: s/step of exact over plain async for each k (and k with
    in-flight updates), the two alternated `--repeats` times in this run; the median ratio."""
    lines = ["| async | plain s/step | exact s/step | exact / plain (median of repeats) |", "|---|---|---|---|"]
    configs = [(int(k), False) for k in args.ks.split(",") if k] + [(int(k), True) for k in args.inflight_ks.split(",") if k]
    for k, inflight in configs:
        ratios, plain, exact = [], [], []
        for _ in range(args.repeats):
            a = run_mode("async", k, args, out_root, inflight, exact=False)["s_per_step"]
            b = run_mode("async", k, args, out_root, inflight, exact=True)["s_per_step"]
            plain.append(a)
            exact.append(b)
            ratios.append(b / a)
        lines.append(f"| k={k}{' in-flight' if inflight else ''} | {statistics.median(plain):.3f} | "
                     f"{statistics.median(exact):.3f} | {statistics.median(ratios):.3f} "
                     f"({', '.join(f'{r:.3f}' for r in ratios)}) |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--min-new-tokens", type=int, default=56)
    ap.add_argument("--prompts", type=int, default=2, help="prompts per step (x 8 samples)")
    ap.add_argument("--ks", default="1,2,4,8")
    ap.add_argument("--inflight-ks", default="1,2", help="async runs with in-flight weight updates")
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "async")
    ap.add_argument("--exact-cost", action="store_true", help="only orchestrate.exact's cost (exact_cost)")
    ap.add_argument("--repeats", type=int, default=3, help="--exact-cost: alternations per setting")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(2)
    if args.exact_cost:
        with tempfile.TemporaryDirectory() as tmp:
            text = exact_cost(args, Path(tmp))
        print(text)
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "exact_cost.md").write_text(provenance() + text)
        return
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        results = [run_mode("sync", 0, args, Path(tmp))]
        results += [run_mode("async", int(k), args, Path(tmp)) for k in args.ks.split(",")]
        results += [run_mode("async", int(k), args, Path(tmp), inflight=True)
                    for k in args.inflight_ks.split(",") if k]
    text = table(results)
    print(text)
    (args.out / "table.md").write_text(provenance() + text)
    (args.out / "results.json").write_text(json.dumps(results, indent=1))
    plot(results, args.out / "async.png")


def provenance() -> str:
    """The first line of table.md and exact_cost.md: the command that wrote the file, and the date."""
    env = f"OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']} " if "OMP_WAIT_POLICY" in os.environ else ""
    command = " ".join([f"{env}python benchmarks/async_pipeline.py", *sys.argv[1:]])
    return (f"Written by `benchmarks/async_pipeline.py` ({time.strftime('%Y-%m-%d')}): `{command}`. "
            "The workload and the reading: [../scaling.md](../scaling.md).\n\n")


if __name__ == "__main__":
    main()
