"""Where a training step's wall time goes, the phases and the per-step work outside them.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/step_overhead.py [--recipe recipes/demo.toml]
        [--steps 30] [--rounds 3] [--ref COMMIT [--new COMMIT]] [--out FILE.json]

Each run is `rlvr.orchestrate.train` on the recipe (eval off, no periodic checkpoint, no
progress display; samples.jsonl and metrics.jsonl written as the recipe asks) in its own
process, with timers wrapped around the loop's parts (the library is not changed). Per step,
medians over steps 2..N:

  cycle      wall time from one step's start to the next's (what a user waits for)
  generate / score        the run's own time/generate_s and time/score_s
    sampler       `PromptSampler.next_batch` (drawing the step's prompts; inside generate)
  train      time/train_forward_s + time/backward_s + time/optimizer_s
  outside    cycle - generate - score - train: the work no phase timer covers, split into
    build_batch   collate, advantages, the batch chain (`Learner.learn` before the trainer)
    trainer_glue  `Trainer.step` minus its three timed phases (zero_grad, clip, finite check)
    sync          `Producer.publish` (the weight sync to the engine)
    report        `Loop._report` (the step's metrics) and `sample_rows` + `append_samples`
    after_step    `Loop._after_step` (metrics.jsonl, the display)
    rest          what is left (the sampler is inside generate; the loop's own glue)

With `--ref COMMIT` the runs alternate between this tree (or `--new COMMIT`) and COMMIT's
`src/` (each commit extracted with `git archive` into a temporary folder, so editing the tree
during the runs changes nothing), so an A/B of a code change is measured in one command
on the same load; the ratio this / ref of each figure is printed per round and as the median.
Each run prints `os.getloadavg()` before and after it, and every run's training metrics
(metrics.jsonl without the timing keys) are compared for bit-for-bit equality with the first
run's: a change that claims to be numerically identical is checked by the same command.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
PARTS = ("build_batch", "trainer_glue", "sync", "report", "after_step")
FIGURES = ("cycle", "generate", "sampler", "score", "train", "outside", *PARTS, "rest")


class Timers:
    """Seconds spent in wrapped callables, per step."""

    def __init__(self):
        self.steps: list[dict[str, float]] = []
        self.current: dict[str, float] = defaultdict(float)

    def wrap(self, owner, name: str, key: str) -> None:
        inner = getattr(owner, name, None)
        if inner is None:  # an older tree without this part: its time stays in "rest"
            return

        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self.current[key] += time.perf_counter() - t0
        setattr(owner, name, timed)


def install(timers: Timers) -> None:
    """Wrap the loop's parts (module-level names where the loop looks them up)."""
    from rlvr.orchestrate import learner, loop, producers, run_folder
    from rlvr.tasks import sampler
    from rlvr.train import trainer

    timers.wrap(sampler.PromptSampler, "next_batch", "sampler")
    timers.wrap(learner, "build_batch", "build_batch")
    timers.wrap(trainer.Trainer, "step", "trainer_step")
    for cls in vars(producers).values():
        if isinstance(cls, type) and issubclass(cls, producers.Producer) and "publish" in vars(cls):
            timers.wrap(cls, "publish", "sync")
    timers.wrap(loop.Loop, "_report", "report")
    timers.wrap(loop, "sample_rows", "report")
    timers.wrap(run_folder.RunFolder, "append_samples", "report")
    timers.wrap(loop.Loop, "_after_step", "after_step")
    start = loop.Loop.train_step

    def train_step(self):  # a step's cycle starts here and ends at the next one's start
        timers.current["start"] = time.perf_counter()
        return start(self)

    def closing(self):
        timers.current["end"] = time.perf_counter()
        timers.steps.append(dict(timers.current))
        timers.current = defaultdict(float)
    after = loop.Loop._after_step
    loop.Loop.train_step = train_step
    loop.Loop._after_step = lambda self, *a: (after(self, *a), closing(self))[0]


def per_step(timers: Timers, rows: list[dict]) -> list[dict[str, float]]:
    out = []
    for t, r, nxt in zip(timers.steps, rows, [*timers.steps[1:], None]):
        end = nxt["start"] if nxt is not None else t["end"]
        train = r["time/train_forward_s"] + r["time/backward_s"] + r["time/optimizer_s"]
        f = {"cycle": end - t["start"], "generate": r["time/generate_s"], "score": r["time/score_s"], "train": train}
        f["outside"] = f["cycle"] - f["generate"] - f["score"] - train
        f["trainer_glue"] = t.get("trainer_step", 0.0) - train
        f.update({k: t.get(k, 0.0) for k in ("sampler", "build_batch", "sync", "report", "after_step")})
        f["rest"] = f["outside"] - sum(f[k] for k in PARTS)
        out.append(f)
    return out


def side(recipe: str, steps: int) -> dict:
    """One run in this process; returns the medians over steps 2..N and the load."""
    import torch
    from rlvr.config import load_config
    from rlvr.orchestrate import train

    torch.set_num_threads(2)
    timers = Timers()
    install(timers)
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as tmp:
        config = load_config(recipe, [f"run.output_dir={tmp}", f"train.steps={steps}", "eval.size=0",
                                      "log.progress=none", "checkpoint.every_minutes=0",
                                      "train.time_limit_s=1000000"])
        rows = train(config).folder.read_metrics()
    load.append(os.getloadavg()[0])
    steps_ = per_step(timers, rows)[1:]
    return {"median_s": {k: statistics.median(s[k] for s in steps_) for k in FIGURES}, "load": load,
            "metrics": [{k: v for k, v in r.items() if not _timing(k)} for r in rows]}


def _timing(key: str) -> bool:
    """Keys that measure wall time (left out of the bit-for-bit comparison)."""
    return key.startswith(("time/", "throughput/")) or key.endswith("_s")


def differing(a: list[dict], b: list[dict]) -> list[str]:
    """'step N: key a != b' for every metric that is not the same float in both runs."""
    out = []
    for i, (x, y) in enumerate(zip(a, b), 1):
        for k in sorted(set(x) | set(y)):
            if x.get(k) != y.get(k) and not (x.get(k) is None and y.get(k) is None):
                out.append(f"step {i}: {k} {x.get(k)!r} != {y.get(k)!r}")
    if len(a) != len(b):
        out.append(f"{len(a)} steps against {len(b)}")
    return out


def extract(commit: str, into: Path) -> Path:
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", commit, "src"], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into / "src"


def run_side(src: Path, recipe: str, steps: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src), "OMP_WAIT_POLICY": "PASSIVE"}
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([sys.executable, __file__, "--side", out.name, "--recipe", recipe, "--steps", str(steps)],
                       env=env, check=True, cwd=REPO)
        return json.loads(Path(out.name).read_text())


def table(results: dict[str, list[dict]]) -> None:
    names = list(results)
    print(f"\n{'figure (median s/step)':24s}" + "".join(f"{n:>22s}" for n in names)
          + ("   this / ref per round (median)" if len(names) == 2 else ""))
    for k in FIGURES:
        meds = [statistics.median(r["median_s"][k] for r in results[n]) for n in names]
        line = f"{k:24s}" + "".join(f"{m:22.4f}" for m in meds)
        if len(names) == 2:
            ratios = [a["median_s"][k] / b["median_s"][k] if b["median_s"][k] > 0 else float("nan")
                      for a, b in zip(results["this"], results["ref"])]
            line += "   " + ", ".join(f"{x:.3f}" for x in ratios) + f" ({statistics.median(ratios):.3f})"
        print(line)
    for n in names:
        print(f"load {n}: " + "; ".join(f"{a:.1f}->{b:.1f}" for a, b in (r["load"] for r in results[n])))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--recipe", default=str(REPO / "recipes" / "demo.toml"))
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ref", help="a commit to alternate with this tree (A/B)")
    ap.add_argument("--new", help="a commit to run instead of the working tree (with --ref)")
    ap.add_argument("--out")
    ap.add_argument("--side", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.side:
        Path(a.side).write_text(json.dumps(side(a.recipe, a.steps)))
        return
    trees = {"this": REPO / "src"}
    with tempfile.TemporaryDirectory() as tmp:
        if a.new:
            trees["this"] = extract(a.new, Path(tmp) / "new")
        if a.ref:
            trees["ref"] = extract(a.ref, Path(tmp) / "ref")
        results: dict[str, list[dict]] = {n: [] for n in trees}
        for i in range(a.rounds):
            for name, src in (trees.items() if i % 2 == 0 else reversed(trees.items())):
                results[name].append(run_side(src, a.recipe, a.steps))
                print(f"round {i + 1} {name}: cycle {results[name][-1]['median_s']['cycle']:.4f} s", flush=True)
    table(results)
    runs = [r for rs in results.values() for r in rs]
    diffs = [d for r in runs[1:] for d in differing(runs[0]["metrics"], r["metrics"])]
    print(f"training metrics of all {len(runs)} runs bit-for-bit equal: {'yes' if not diffs else 'NO'}")
    for d in diffs[:20]:
        print("  " + d)
    if a.out:
        Path(a.out).write_text(json.dumps({"args": vars(a), "results": results}, indent=1))


if __name__ == "__main__":
    main()
