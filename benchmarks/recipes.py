"""Every recipe on one task with the same budget and seeds: held-out accuracy by step, completion
length and clipping.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/recipes.py [--task demo|scratchpad] [--steps N]
        [--seeds 0,1] [--recipes a,b] [--out docs/recipes]

Tasks (`TASKS`):

- `demo`: the shipped tiny model on two-digit addition (completions of 2-4 tokens), each
  recipe exactly as written.
- `scratchpad`: chain sums of 2-8 one-digit terms with a worked scratchpad
  (scripts/make_scratchpad_model.py, models/tiny-scratch): worked solutions of 8-58 tokens whose
  length follows the number of terms, a 64-token budget, and two optimiser updates per batch
  so that the second update's ratio has moved and the recipes' clipping acts. Each recipe's
  length-tied settings are rescaled to the 64-token budget (see `budget_overrides`).

Each recipe in recipes/ (demo and the environment recipe excluded) trains for `--steps` steps
of `Task.prompts` prompts x 8 samples (demo 16, scratchpad 8), from the same model and seeds, with one learning rate and evaluation
(greedy accuracy on 200 held-out problems every `--every` steps). Per run it keeps the accuracy
curve, the mean sampled completion length and the share of completions cut at the budget over
the last quarter of the steps, and the mean share of tokens the recipe's trust region acted on
(`clipped`: the sum of the `policy/*_frac` indicators that recipe logs, docs/metrics.md). It
writes `runs_TASK.json`, a plot (`Task.plot`), and its table between the task's markers in
`table.md` (the text around the tables is kept); with `--variant NAME`, `runs_TASK-NAME.json`
and its own section and plot.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRATCH = "models/tiny-scratch"


@dataclass(frozen=True)
class Task:
    overrides: tuple[str, ...]  # applied to every recipe
    budget: int  # sampling.max_new_tokens and eval.max_new_tokens
    prompts: int  # sampling.prompts_per_step (8 samples each)
    steps: int
    every: int
    lr: float
    plot: str  # file name in --out


TASKS = {
    "demo": Task(overrides=(), budget=8, prompts=16, steps=200, every=25, lr=3e-5, plot="recipes.png"),
    "scratchpad": Task(overrides=(
        f"model.path={SCRATCH}", "task.kind=jsonl", f"task.train_path={SCRATCH}/task/train.jsonl",
        f"task.test_path={SCRATCH}/task/test.jsonl", "reward.verifier=exact", "train.updates_per_batch=2",
    ), budget=64, prompts=8, steps=30, every=10, lr=3e-5, plot="recipes_scratchpad.png"),
}
# The trust-region indicators the surrogates log (docs/metrics.md); a run sums those it has.
CLIP_METRICS = ("policy/clip_low_frac", "policy/clip_high_frac", "policy/clip_dual_frac",
                "policy/weight_clip_low_frac", "policy/weight_clip_high_frac", "policy/masked_frac",
                "policy/weight_low_frac", "policy/gate_weak_frac")
NOT_BENCHMARKED = {"demo", "env_guess_number", "env_python_demo", "env_textarena_guess_number", "env_repo_located"}  # the demo is grpo; the environment recipes are multi-turn


def budget_overrides(recipe: Path, budget: int) -> list[str]:
    """The recipe's settings tied to its generation budget, rescaled to `budget`: Dr. GRPO's
    constant C (= the budget) and DAPO's overlong window (the same share of the budget)."""
    from rlvr.config import load_config

    base = load_config(recipe)
    own = base.sampling.max_new_tokens
    out = [f"sampling.max_new_tokens={budget}", f"eval.max_new_tokens={budget}"]
    if own == budget:
        return out
    options = base.algo.options("aggregation")  # [algo.seq_mean_token_sum_norm] for Dr. GRPO
    if options is not None and options.constant == own:
        out.append(f"algo.seq_mean_token_sum_norm.constant={float(budget)}")
    if base.sampling.overlong_cache:
        out.append(f"sampling.overlong_cache={max(1, round(base.sampling.overlong_cache * budget / own))}")
    return out


def task_overrides(name: str, task: Task) -> list[str]:
    recipe = REPO / "recipes" / f"{name}.toml"
    return [*task.overrides, f"sampling.prompts_per_step={task.prompts}", *budget_overrides(recipe, task.budget)]


def run(name: str, seed: int, args, root: Path) -> dict:
    from rlvr.config import load_config
    from rlvr.orchestrate import train

    config = load_config(REPO / "recipes" / f"{name}.toml", [
        *task_overrides(name, args.task_spec), f"run.output_dir={root}", f"run.name={name}-{seed}",
        f"run.seed={seed}", f"train.steps={args.steps}", f"train.lr={args.lr}", f"eval.every={args.every}",
        "eval.size=200", "log.progress=none", "checkpoint.every=100000", "checkpoint.every_minutes=0",
        "train.time_limit_s=100000"])
    start = time.perf_counter()
    rows = train(config, eval_full=False).folder.read_metrics()
    # The 1-minute load average at the end: on a shared machine the timings mean little without it.
    return {**summarize(rows, args.start_accuracy, time.perf_counter() - start), "load": round(os.getloadavg()[0], 1)}


def summarize(rows: list[dict], start_accuracy: float, seconds: float) -> dict:
    """A run's accuracy curve, and its length, truncation and clipping means (see the docstring)."""
    steps = [r for r in rows if "response/length_mean" in r]
    last = steps[len(steps) - max(1, len(steps) // 4):]
    clipped = [sum(r.get(k, 0.0) for k in CLIP_METRICS) for r in steps if "loss/policy" in r]
    return {"curve": [(0, start_accuracy)] + [(r["step"], r["eval/accuracy"]) for r in rows if "eval/accuracy" in r],
            "length": statistics.fmean(r["response/length_mean"] for r in last),
            "truncated": statistics.fmean(r.get("response/truncated_frac", 0.0) for r in last),
            "clipped": statistics.fmean(clipped) if clipped else 0.0, "seconds": round(seconds, 1)}


def start_accuracy(task: Task) -> float:
    """Greedy accuracy of the task's starting model on the 200 problems every run evaluates on."""
    from rlvr.config import load_config
    from rlvr.evaluate import greedy_accuracy
    from rlvr.orchestrate.components import build
    from rlvr.orchestrate.plan import plan_run

    parts = build(plan_run(load_config(REPO / "recipes" / "grpo.toml", task_overrides("grpo", task))), REPO)
    return greedy_accuracy(parts.engine, parts.test_set[:200], parts.reward_fn, max_new_tokens=task.budget)


def _stat(runs: list[dict], key: str, fmt: str) -> str:
    values = [r[key] for r in runs if r.get(key) is not None]
    return format(statistics.fmean(values), fmt) if values else "not recorded"


def _best(runs: list[dict]) -> str:
    """The evaluation step with the highest accuracy, mean over the seeds: where a run peaked."""
    curves = [dict((step, acc) for step, acc in r["curve"][1:]) for r in runs]
    step, acc = max(((s, statistics.fmean(c[s] for c in curves)) for s in curves[0]), key=lambda sa: sa[1])
    return f"{acc:.1%} (step {step})"


def table(results: dict[str, list[dict]]) -> str:
    finals = {n: [r["curve"][-1][1] for r in runs] for n, runs in results.items()}
    base = statistics.fmean(finals["grpo"]) if "grpo" in finals else None
    lines = ["| recipe | final accuracy (mean) | per seed | vs GRPO (points) | best evaluation (mean) "
             "| completion length (tokens) | cut at budget | clipped tokens |", "|---|---|---|---|---|---|---|---|"]
    for n, f in sorted(finals.items(), key=lambda kv: -statistics.fmean(kv[1])):
        mean = statistics.fmean(f)
        versus = f"{(mean - base) * 100:+.1f}" if base is not None else "-"
        runs = results[n]
        lines.append(f"| {n} | {mean:.1%} | {', '.join(f'{x:.1%}' for x in f)} | {versus} | {_best(runs)} | "
                     f"{_stat(runs, 'length', '.1f')} | {_stat(runs, 'truncated', '.1%')} | "
                     f"{_stat(runs, 'clipped', '.2%')} |")
    return "\n".join(lines) + "\n"


def write_section(path: Path, task: str, text: str) -> None:
    """Put `text` between the task's markers in `path`, keeping everything else; appended at
    the end the first time."""
    begin, end = f"<!-- begin table {task} (benchmarks/recipes.py) -->", f"<!-- end table {task} -->"
    old = path.read_text() if path.exists() else ""
    block = f"{begin}\n{text}{end}"
    if begin in old and end in old:
        head, rest = old.split(begin, 1)
        new = head + block + rest.split(end, 1)[1]
    else:
        new = old + ("\n" if old and not old.endswith("\n") else "") + block + "\n"
    path.write_text(new)


def plot(results: dict[str, list[dict]], out: Path, prompts: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    for name, runs in sorted(results.items()):
        steps = [s for s, _ in runs[0]["curve"]]
        values = [[a for _, a in r["curve"]] for r in runs]
        line, = ax.plot(steps, [statistics.fmean(v) for v in zip(*values)], label=name)
        ax.fill_between(steps, [min(v) for v in zip(*values)], [max(v) for v in zip(*values)],
                        color=line.get_color(), alpha=0.15)
    ax.set_xlabel(f"step ({prompts} prompts x 8 samples)")
    ax.set_ylabel("held-out greedy accuracy (200 problems)")
    ax.grid(alpha=0.3)
    ax.legend(ncol=2, fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=100)


def _threads(n: int) -> None:
    import torch

    torch.set_num_threads(n)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--task", choices=sorted(TASKS), default="demo")
    ap.add_argument("--steps", type=int, help="default: the task's (demo 200, scratchpad 30)")
    ap.add_argument("--every", type=int, help="default: the task's (demo 25, scratchpad 10)")
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--lr", type=float, help="default: the task's (both 3e-5)")
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "recipes")
    ap.add_argument("--recipes", default="", help="comma-separated subset to (re)run; the rest are read from runs_TASK.json")
    ap.add_argument("--variant", default="", help="a name for runs with other settings (--lr, --steps): "
                                                  "their own runs file, table section and plot")
    ap.add_argument("--table-only", action="store_true", help="rebuild the table and plot from runs_TASK.json")
    ap.add_argument("--jobs", type=int, default=1, help="runs at once, each in its own process")
    ap.add_argument("--threads", type=int, default=2, help="torch threads per run")
    args = ap.parse_args()
    _threads(args.threads)
    args.task_spec = spec = TASKS[args.task]
    args.steps, args.every, args.lr = args.steps or spec.steps, args.every or spec.every, args.lr or spec.lr
    args.out.mkdir(parents=True, exist_ok=True)
    key = f"{args.task}-{args.variant}" if args.variant else args.task  # the runs file, table and plot
    saved = args.out / f"runs_{key}.json"
    if args.table_only:
        results = json.loads(saved.read_text())
    else:
        results = sweep(args, saved)
    text = table(results)
    print(text)
    write_section(args.out / "table.md", key, text)
    plot_file = Path(spec.plot).stem + (f"-{args.variant}" if args.variant else "") + ".png"
    plot(results, args.out / plot_file, spec.prompts)


def sweep(args, saved: Path) -> dict[str, list[dict]]:
    """Run the recipes (all, or --recipes) for every seed; with --recipes, the other recipes'
    runs are kept from the last run of the script."""
    args.start_accuracy = start_accuracy(args.task_spec)
    names = args.recipes.split(",") if args.recipes else sorted(
        p.stem for p in (REPO / "recipes").glob("*.toml") if p.stem not in NOT_BENCHMARKED)
    results: dict[str, list] = json.loads(saved.read_text()) if args.recipes and saved.exists() else {}
    seeds = [int(s) for s in args.seeds.split(",")]
    with tempfile.TemporaryDirectory() as tmp, ProcessPoolExecutor(
            args.jobs, mp_context=multiprocessing.get_context("spawn"),  # no fork of a process with OpenMP threads
            initializer=_threads, initargs=(args.threads,)) as pool:
        futures = {name: [pool.submit(run, name, seed, args, Path(tmp)) for seed in seeds] for name in names}
        for name, runs in futures.items():
            results[name] = [f.result() for f in runs]
            print(name, [(r["curve"][-1][1], round(r["length"], 1), r["seconds"]) for r in results[name]], flush=True)
            saved.write_text(json.dumps(results))  # a sweep stopped part-way keeps what it finished
    return results


if __name__ == "__main__":
    main()
