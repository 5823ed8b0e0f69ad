"""Decode-path variants on workload 1's generation, each in its own process, ratios against a base.

    nice -n -10 python benchmarks/decode_variants.py [--reps 5] [--variants base,compile,threads1,active]
        [--busy N] [--out FILE]

The generation phase of `arith64-tinyqwen2-g8-v1` (shared/bench/WORKLOAD.md): 8 prompts x 8
samples x exactly 64 new tokens through `HFEngine`'s fast Qwen2 decode path. Variants:

- `base`: 2 threads, `OMP_WAIT_POLICY=PASSIVE` (WORKLOAD.md), eager blocks;
- `compile`: as base, the per-layer blocks through `torch.compile` (`HFEngine(compile_decode=True)`);
- `threads1`: one intra-op thread;
- `active`: `OMP_WAIT_POLICY=ACTIVE` (OpenMP workers spin between parallel regions, in
  libgomp for up to 30 billion iterations: in effect they never sleep);
- `default`: no `OMP_WAIT_POLICY` (libgomp's default: spin 300,000 times, then sleep).

Each variant is a fresh process (thread settings and compile caches are per process): one
untimed call (its time, compilation included, is "first call"), then `--reps` timed calls.
Processes run variant by variant in rounds (base, v1, v2, ..., base, v1, ...) so the machine's
drift spreads over all of them; the figure is each variant's median tokens/s over the base's
median in the same run. Each variant's first call uses the same seed and prompts as the base's,
so its tokens and log-probs are compared with the base's: the share of identical rollouts and
the largest |delta logp| on the tokens before a row's first difference. `--busy N` keeps N
other processes spinning on the CPU for the whole run (a machine whose cores are shared).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

VARIANTS = {
    "base": ({"OMP_WAIT_POLICY": "PASSIVE"}, 2, False),
    "compile": ({"OMP_WAIT_POLICY": "PASSIVE"}, 2, True),
    "threads1": ({"OMP_WAIT_POLICY": "PASSIVE"}, 1, False),
    "active": ({"OMP_WAIT_POLICY": "ACTIVE"}, 2, False),
    # libgomp's own default: no policy set, workers spin 300,000 times before they sleep.
    "default": ({"OMP_WAIT_POLICY": None}, 2, False),
}


def worker(name: str, reps: int, out: Path) -> None:
    """One variant's process: build the engine, one untimed call, `reps` timed calls."""
    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from step_throughput import GROUP, MODEL, PROMPTS_PER_STEP, make_prompts

    from rlvr.engines import HFEngine, SamplingParams
    from rlvr.models import build_char_tokenizer, tiny_qwen2

    _, threads, compiled = VARIANTS[name]
    torch.set_num_threads(threads)
    engine = HFEngine(tiny_qwen2(**MODEL), build_char_tokenizer(128), seed=0, compile_decode=compiled)
    params = SamplingParams(max_new_tokens=64, min_new_tokens=64, temperature=1.0)
    prompts = [p for p, _ in make_prompts()[:PROMPTS_PER_STEP]]
    t0 = time.perf_counter()
    first = engine.generate(prompts, GROUP, params)
    first_s = time.perf_counter() - t0
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        engine.generate(prompts, GROUP, params)
        times.append(time.perf_counter() - t0)
    rows = [(r.completion_ids, r.logprobs) for group in first for r in group]
    out.write_text(json.dumps({"first_s": first_s, "times": times, "tokens": PROMPTS_PER_STEP * GROUP * 64,
                               "rows": rows}))


def compare(base_rows, rows) -> tuple[float, float]:
    """(share of rollouts identical to the base's, max |delta logp| before each row's first difference)."""
    same, worst = 0, 0.0
    for (ids_a, lp_a), (ids_b, lp_b) in zip(base_rows, rows):
        n = next((i for i, (a, b) in enumerate(zip(ids_a, ids_b)) if a != b), min(len(ids_a), len(ids_b)))
        same += ids_a == ids_b
        worst = max([worst] + [abs(a - b) for a, b in zip(lp_a[:n], lp_b[:n])])
    return same / len(base_rows), worst


def run(names: list[str], reps: int, rounds: int, busy: int) -> dict:
    results: dict[str, list[dict]] = {n: [] for n in names}
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(busy)]
    load = [os.getloadavg()[0]]
    try:
        return _rounds(names, reps, rounds, results, load)
    finally:
        for proc in spinners:
            proc.kill()


def _rounds(names, reps, rounds, results, load) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for name in names:
                env_extra, threads, _ = VARIANTS[name]
                out = Path(tmp) / f"{name}-{r}.json"
                env = {**os.environ, **env_extra, "OMP_NUM_THREADS": str(threads)}
                env = {k: v for k, v in env.items() if v is not None}
                subprocess.run([sys.executable, __file__, "--worker", name, "--reps", str(reps), "--to", str(out)],
                               env=env, check=True)
                results[name].append(json.loads(out.read_text()))
                load.append(os.getloadavg()[0])
    return {"results": results, "load": load}


def summarize(names: list[str], data: dict) -> dict:
    res = data["results"]

    def tok_s(name):
        return statistics.median(d["tokens"] / t for d in res[name] for t in d["times"])

    base_tok_s = tok_s("base")
    table = {}
    for name in names:
        same, worst = compare(res["base"][0]["rows"], res[name][0]["rows"])
        table[name] = {"tok_s": tok_s(name), "ratio": tok_s(name) / base_tok_s,
                       "first_call_s": statistics.median(d["first_s"] for d in res[name]),
                       "same_rollouts": same, "max_dlogp": worst}
    return {"table": table, "load": data["load"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--variants", default="base,compile,threads1,active")
    ap.add_argument("--busy", type=int, default=0, help="other processes spinning on the CPU during the run")
    ap.add_argument("--out")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--to", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker, args.reps, Path(args.to))
    names = args.variants.split(",")
    unknown = [n for n in names if n not in VARIANTS]
    if unknown or "base" not in names:
        sys.exit(f"decode_variants: --variants must include base and name only {sorted(VARIANTS)}; got {names}")
    summary = summarize(names, run(names, args.reps, args.rounds, args.busy))
    print(f"load 1-min: {' '.join(f'{x:.1f}' for x in summary['load'])}")
    print(f"{'variant':<10} {'tok/s':>8} {'x base':>7} {'first call s':>13} {'same rollouts':>14} {'max |dlogp|':>12}")
    for name, row in summary["table"].items():
        print(f"{name:<10} {row['tok_s']:>8.0f} {row['ratio']:>7.3f} {row['first_call_s']:>13.2f} "
              f"{row['same_rollouts']:>14.2f} {row['max_dlogp']:>12.2e}")
    if args.out:
        Path(args.out).write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
