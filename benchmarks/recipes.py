"""Every recipe on the demo task with the same budget and seeds: held-out accuracy by step.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/recipes.py [--steps 200] [--seeds 0,1] [--out docs/recipes]

Each recipe in recipes/ (demo excluded) trains the shipped tiny model for `--steps` steps of
16 prompts x 8 samples, from the same model and seeds, with the demo's learning rate and
evaluation (greedy accuracy on 200 held-out problems every `--every` steps). The only
differences between runs are the recipes' algorithm axes. Writes `table.md` (final accuracy,
mean and spread over seeds, and the change against GRPO) and `recipes.png` (accuracy by step,
one line per recipe, the band spanning the seeds).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run(name: str, seed: int, args, root: Path) -> list[tuple[int, float]]:
    from rlvr.config import load_config
    from rlvr.orchestrate import train

    config = load_config(REPO / "recipes" / f"{name}.toml", [
        f"run.output_dir={root}", f"run.name={name}-{seed}", f"run.seed={seed}", f"train.steps={args.steps}",
        f"train.lr={args.lr}", f"eval.every={args.every}", "eval.size=200", "log.progress=none",
        "checkpoint.every=100000", "checkpoint.every_minutes=0", "train.time_limit_s=100000"])
    result = train(config, eval_full=False)
    return [(0, args.start_accuracy)] + [(r["step"], r["eval/accuracy"]) for r in result.folder.read_metrics() if "eval/accuracy" in r]


def start_accuracy() -> float:
    """Greedy accuracy of the shipped model on the 200 problems every run evaluates on."""
    from rlvr.config import load_config
    from rlvr.evaluate import greedy_accuracy
    from rlvr.orchestrate.components import build
    from rlvr.orchestrate.plan import plan_run

    parts = build(plan_run(load_config(REPO / "recipes" / "demo.toml")), REPO)
    return greedy_accuracy(parts.engine, parts.test_set[:200], parts.reward_fn, max_new_tokens=8)


def table(curves: dict[str, list[list[tuple[int, float]]]]) -> str:
    finals = {n: [c[-1][1] for c in runs] for n, runs in curves.items()}
    base = statistics.fmean(finals["grpo"])
    lines = ["| recipe | final accuracy (mean) | per seed | vs GRPO (points) |", "|---|---|---|---|"]
    for n, f in sorted(finals.items(), key=lambda kv: -statistics.fmean(kv[1])):
        lines.append(f"| {n} | {statistics.fmean(f):.1%} | {', '.join(f'{x:.1%}' for x in f)} | "
                     f"{(statistics.fmean(f) - base) * 100:+.1f} |")
    return "\n".join(lines) + "\n"


def plot(curves, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    for name, runs in sorted(curves.items()):
        steps = [s for s, _ in runs[0]]
        values = [[a for _, a in r] for r in runs]
        mean = [statistics.fmean(v) for v in zip(*values)]
        line, = ax.plot(steps, mean, label=name)
        ax.fill_between(steps, [min(v) for v in zip(*values)], [max(v) for v in zip(*values)],
                        color=line.get_color(), alpha=0.15)
    ax.set_xlabel("step (16 prompts x 8 samples)")
    ax.set_ylabel("held-out greedy accuracy (200 problems)")
    ax.grid(alpha=0.3)
    ax.legend(ncol=2, fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=100)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--every", type=int, default=25)
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--lr", type=float, default=3e-5)
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "recipes")
    ap.add_argument("--recipes", default="", help="comma-separated subset to (re)run; the rest are read from curves.json")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(2)
    args.out.mkdir(parents=True, exist_ok=True)
    args.start_accuracy = start_accuracy()
    names = sorted(p.stem for p in (REPO / "recipes").glob("*.toml") if p.stem != "demo")
    if args.recipes:
        names = args.recipes.split(",")
    saved = args.out / "curves.json"
    # With --recipes, the other recipes' curves are kept from the last full run.
    curves: dict[str, list] = json.loads(saved.read_text()) if args.recipes and saved.exists() else {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            curves[name] = [run(name, int(s), args, Path(tmp)) for s in args.seeds.split(",")]
            print(name, [c[-1][1] for c in curves[name]], flush=True)
    text = table(curves)
    print(text)
    (args.out / "table.md").write_text(text)
    (args.out / "curves.json").write_text(json.dumps(curves))
    plot(curves, args.out / "recipes.png")


if __name__ == "__main__":
    main()
