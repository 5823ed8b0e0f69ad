"""The failure curriculum against uniform sampling and ScaleRL's, at the same compute (issue 25;
docs/environments-results.md, "Failure curriculum: the study").

Three arms x two environments x seeds, each run the same number of steps of the same
prompts x group size (so the same episodes), evaluated once at its last step on the whole
held-out split (one greedy episode a task: `eval/accuracy`, and per feature of the run's task
generator: `eval/env/success/<feature>=<value>`):

    uniform    the base sampler only
    scalerl    sampling.curriculum = "no_positive_resampling" (a task retired at pass rate 0.9)
    failures   env.curriculum = "failures", env.failure_mix = 0.5, fresh tasks by feature

Environments, each with the shipped model that speaks it (no shipped model speaks a tool
world's `<tool_call>` protocol, so no world is studied here):

    python_tool   recipes/env_python_demo.toml, models/tiny-tool (two-digit products, the sandbox)
    guess_number  recipes/env_guess_number.toml, models/tiny-env (1..20 in 5 guesses)

    nice -n 10 python benchmarks/curriculum.py --out benchmarks/results/curriculum.json

The JSON is rewritten after each run, so a cut-off study keeps the runs it finished.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from rlvr.config import load_config  # noqa: E402
from rlvr.orchestrate import train  # noqa: E402

ENVS = {
    "python_tool": ("env_python_demo", ["train.steps=6", "eval.size=200", "train.time_limit_s=100000"]),
    "guess_number": ("env_guess_number", ["train.steps=20", "eval.size=100", "eval.max_new_tokens=4"]),
}
ARMS = {
    "uniform": [],
    "scalerl": ['sampling.curriculum="no_positive_resampling"'],
    "failures": ['env.curriculum="failures"', "env.failure_mix=0.5"],
}
KEPT = ("env/failures/pool_size", "env/failures/retired", "env/failures/retired_steps_mean",
        "env/failures/unsolved_steps_mean", "curriculum/retired")


def load() -> str:
    return Path("/proc/loadavg").read_text().split(" ")[0]


def one_run(env: str, arm: str, seed: int, root: Path) -> dict:
    recipe, overrides = ENVS[env]
    steps = int(next(o for o in overrides if o.startswith("train.steps=")).split("=")[1])
    config = load_config(REPO / "recipes" / f"{recipe}.toml", [
        *overrides, *ARMS[arm], f"run.seed={seed}", f"run.output_dir={root}", f"run.name={env}-{arm}-{seed}",
        f"eval.every={steps}", "log.progress=none", "checkpoint.every_minutes=0"])
    start_load, t0 = load(), time.time()
    rows = train(config).folder.read_metrics()
    last = rows[-1]
    success = [r["env/success_rate"] for r in rows if "env/success_rate" in r]
    return {"env": env, "arm": arm, "seed": seed, "steps": len(rows), "seconds": round(time.time() - t0, 1),
            "load": [start_load, load()], "held_out_success": last["eval/accuracy"],
            "held_out_by_feature": {k.removeprefix("eval/env/success/"): v for k, v in last.items()
                                    if k.startswith("eval/env/success/")},
            "train_success_first5": sum(success[:5]) / max(len(success[:5]), 1),
            "train_success_last5": sum(success[-5:]) / max(len(success[-5:]), 1),
            "synthesized": sum(r.get("env/failures/synthesized", 0) for r in rows),
            "replayed": sum(r.get("env/failures/replayed", 0) for r in rows),
            **{k: last[k] for k in KEPT if k in last}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "curriculum.json")
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--envs", default=",".join(ENVS))
    args = ap.parse_args()
    os.chdir(REPO)  # the recipes' relative paths (model.path)
    result = {"command": "nice -n 10 python benchmarks/curriculum.py " + " ".join(sys.argv[1:]),
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "runs": []}
    with tempfile.TemporaryDirectory() as root:
        for env in args.envs.split(","):
            for seed in (int(s) for s in args.seeds.split(",")):
                for arm in ARMS:
                    try:
                        result["runs"].append(one_run(env, arm, seed, Path(root)))
                    except Exception as err:  # a failed run is recorded, and the study goes on
                        result["runs"].append({"env": env, "arm": arm, "seed": seed, "error": repr(err)[:300]})
                    args.out.parent.mkdir(parents=True, exist_ok=True)
                    args.out.write_text(json.dumps(result, indent=1) + "\n")
                    print(json.dumps(result["runs"][-1]), flush=True)


if __name__ == "__main__":
    main()
