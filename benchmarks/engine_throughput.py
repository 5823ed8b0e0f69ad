"""rlvr's in-process engine (fast Qwen2 path and generic path) against plain `model.generate`.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/engine_throughput.py [--reps 5] [--workers N] [--out FILE]

The model is WORKLOAD.md's (3.97M-parameter Qwen2, random init, character tokenizer, fp32) and
the work is one rollout batch of the workload: 8 prompts x 8 samples, 64 new tokens each,
temperature 1. All sides are forced to the same length (EOS suppressed until 64 tokens), so
they generate exactly the same number of tokens:

  - `HFEngine.generate(prompts, 8, SamplingParams(64, min_new_tokens=64))`: rlvr's sampler,
    which also returns each token's log-prob, the finish reasons and decoded text; once with
    its default fast decode path (`rlvr.engines.qwen2_decode`), once with `fast_decode=False`
    (the model's own forward with a `DynamicCache`, "HF path").
  - the same fast engine with `share_prefill=False` (every row prefilled, a group's G copies
    of a prompt G times: what HFEngine did before 2026-12-02), seeded alike, so that the two fast
    sides' rollouts can be compared call for call (tokens identical? largest log-prob gap?).
  - `model.generate(ids, attention_mask, do_sample=True, top_k=0, min_new_tokens=64,
    max_new_tokens=64, num_return_sequences=8)` with `output_scores=True`, so that it too
    keeps what log-probs need (without it, it does less work than the engine).

  - with `--workers N`, `LocalPoolEngine` (`orchestrate.rollout_workers = N`: N local processes
    over the same weights in shared memory, each with a share of the threads and a chunk of
    the rows), "pool"; after the calls, each worker's own pages (Private_Clean + Private_Dirty).

The four (five) run interleaved, `--reps` times each after one warm-up, and the report gives ratios
of the medians (fast / HF path, fast / `generate`, HF path / `generate`, fast / fast unshared,
as tokens/s over tokens/s) and the 1-minute load average before and after, measured in the
same run on the same machine: absolute times on a shared machine are noise.

    python benchmarks/engine_throughput.py --grid [--vllm-python .venv-vllm/bin/python] [--out FILE]

`--grid` instead compares HFEngine, vLLM (the CPU build, run by --vllm-python) and
`model.generate` on the vs-TRL grid's 4M and 30M models over completion lengths and group sizes
(benchmarks/engine_sides.py, one process per side and model: tokens/s, time to first rollout
with vLLM's start and compilation, peak RSS of the process tree) and prints a markdown table.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from step_throughput import GROUP, MODEL, NEW_TOKENS, PROMPTS_PER_STEP, make_prompts  # noqa: E402

from rlvr.engines import HFEngine, SamplingParams  # noqa: E402
from rlvr.engines.hf import left_pad  # noqa: E402
from rlvr.models import build_char_tokenizer, tiny_qwen2  # noqa: E402


def time_engine(engine: HFEngine, prompts: list[str], keep: list | None = None) -> tuple[float, int]:
    params = SamplingParams(max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS, temperature=1.0)
    t0 = time.perf_counter()
    groups = engine.generate(prompts, GROUP, params)
    seconds = time.perf_counter() - t0
    if keep is not None:
        keep.append([r for g in groups for r in g])
    return seconds, sum(len(r.completion_ids) for g in groups for r in g)


def shared_vs_unshared(shared: list, unshared: list) -> dict:
    """The two fast sides draw from generators seeded alike, call for call: their rollouts differ
    only where the shared prefill's rounding does (tokens identical while the logits are)."""
    pairs = [(a, b) for call_a, call_b in zip(shared, unshared) for a, b in zip(call_a, call_b)]
    same = all(a.completion_ids == b.completion_ids for a, b in pairs)
    worst = max(abs(x - y) for a, b in pairs for x, y in zip(a.logprobs, b.logprobs))
    return {"share_prefill_tokens_identical": same, "share_prefill_max_abs_logprob_diff": worst}


def time_generate(model, tokenizer, prompts: list[str]) -> tuple[float, int]:
    rows = [tokenizer(p, add_special_tokens=False)["input_ids"] for p in prompts]
    ids, mask = left_pad(rows, tokenizer.pad_token_id)
    t0 = time.perf_counter()
    with torch.inference_mode():
        out = model.generate(input_ids=ids, attention_mask=mask, do_sample=True, top_k=0, top_p=1.0,
                             temperature=1.0, min_new_tokens=NEW_TOKENS, max_new_tokens=NEW_TOKENS,
                             num_return_sequences=GROUP, output_scores=True, return_dict_in_generate=True,
                             pad_token_id=tokenizer.pad_token_id)
    seconds = time.perf_counter() - t0
    return seconds, int(out.sequences[:, ids.shape[1]:].numel())


def private_mib(pid: int) -> float:
    """A process's pages of its own (Private_Clean + Private_Dirty of /proc/PID/smaps_rollup):
    for a forked pool worker, what it holds beyond the pages it shares with this process."""
    with open(f"/proc/{pid}/smaps_rollup") as f:
        return sum(int(line.split()[1]) for line in f if line.startswith(("Private_Clean:", "Private_Dirty:"))) / 1024


def grid(args) -> list[dict]:
    """engine_sides.py for every side and model; its JSON lines, with a markdown table printed."""
    import subprocess

    rows = []
    for model in args.models.split(","):
        for side in ("hf", "vllm", "generate"):
            py = args.vllm_python if side == "vllm" else sys.executable
            cmd = [py, str(Path(__file__).with_name("engine_sides.py")), "--side", side, "--model", model,
                   "--lengths", args.lengths, "--groups", args.groups, "--reps", str(args.side_reps),
                   "--reps-long", str(args.side_reps_long)]
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=args.side_timeout)
            got = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
            if done.returncode != 0:
                print(f"{side} {model}: exit {done.returncode}: {done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            rows += got
            if args.out:  # after each side, so that a run cut short keeps what it measured
                args.out.write_text(json.dumps(rows, indent=1) + "\n")
    print("| model | L | G | side | tokens/s | reps | first rollout (s) | peak RSS (GiB) | load |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in sorted(rows, key=lambda r: (r["model"], r["length"], r["group"], r["side"])):
        print(f"| {r['model']} | {r['length']} | {r['group']} | {r['side']} | {r['tokens_per_s']:.0f} | {r['reps']} | "
              f"{r['first_rollout_s']:.0f} | {r['peak_rss_gib']:.2f} | {r['load']:.1f} |")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", type=Path, help="write the results as JSON here")
    ap.add_argument("--workers", type=int, default=0, help="also time LocalPoolEngine with this many worker processes")
    ap.add_argument("--grid", action="store_true", help="HFEngine vs vLLM vs model.generate on the 4M / 30M models")
    ap.add_argument("--vllm-python", default=".venv-vllm/bin/python")
    ap.add_argument("--models", default="4M,30M")
    ap.add_argument("--lengths", default="64,256,1024")
    ap.add_argument("--groups", default="8,32")
    ap.add_argument("--side-timeout", type=int, default=3600)
    ap.add_argument("--side-reps", type=int, default=2, help="--grid: timed calls per (L, G) below L = 512")
    ap.add_argument("--side-reps-long", type=int, default=1, help="--grid: timed calls per (L, G) from L = 512")
    args = ap.parse_args()
    if args.grid:
        grid(args)
        return
    torch.set_num_threads(os.cpu_count() or 1)
    tokenizer = build_char_tokenizer(128)
    model = tiny_qwen2(**MODEL).eval()
    prompts = [text for text, _ in make_prompts()[:PROMPTS_PER_STEP]]
    fast, slow = HFEngine(model, tokenizer, seed=0), HFEngine(model, tokenizer, seed=0, fast_decode=False)
    unshared = HFEngine(model, tokenizer, seed=0, share_prefill=False)
    kept: dict[str, list] = {"fast": [], "fast_unshared": []}
    sides = {"fast": lambda: time_engine(fast, prompts, kept["fast"]),
             "fast_unshared": lambda: time_engine(unshared, prompts, kept["fast_unshared"]),
             "hf_path": lambda: time_engine(slow, prompts),
             "generate": lambda: time_generate(model, tokenizer, prompts)}
    if args.workers:
        from rlvr.engines.local_pool import LocalPoolEngine

        pool = LocalPoolEngine(model, tokenizer, workers=args.workers, seed=0)
        sides["pool"] = lambda: time_engine(pool, prompts)
    load_before = os.getloadavg()[0]
    for run in sides.values():  # warm-up
        run()
    seconds: dict[str, list[float]] = {name: [] for name in sides}
    tokens = set()
    for _ in range(args.reps):
        for name, run in sides.items():
            s, n = run()
            seconds[name].append(s)
            tokens.add(n)
    if len(tokens) != 1:
        raise SystemExit(f"the sides generated different token counts: {sorted(tokens)}")
    n = tokens.pop()
    med = {name: statistics.median(s) for name, s in seconds.items()}
    result = {"tokens_per_call": n, "reps": args.reps,
              **{f"{name}_tokens_per_s": n / m for name, m in med.items()},
              "fast_over_hf_path": med["hf_path"] / med["fast"],
              "fast_over_fast_unshared": med["fast_unshared"] / med["fast"],
              "fast_unshared_over_generate": med["generate"] / med["fast_unshared"],
              "fast_over_generate": med["generate"] / med["fast"],
              "hf_path_over_generate": med["generate"] / med["hf_path"],
              **({"workers": args.workers, "pool_over_generate": med["generate"] / med["pool"],
                  "pool_over_fast": med["fast"] / med["pool"],
                  "pool_worker_private_mib": [private_mib(w.process.pid) for w in pool._workers]}
                 if args.workers else {}),
              **shared_vs_unshared(kept["fast"], kept["fast_unshared"]),
              "load_before_after": [load_before, os.getloadavg()[0]],
              **{f"{name}_s": s for name, s in seconds.items()}}
    print(f"{n} tokens a call; median over {args.reps}: HFEngine fast {result['fast_tokens_per_s']:.0f} tok/s, "
          f"HFEngine HF path {result['hf_path_tokens_per_s']:.0f} tok/s, "
          f"model.generate {result['generate_tokens_per_s']:.0f} tok/s; fast / HF path = "
          f"{result['fast_over_hf_path']:.2f}x, fast / generate = {result['fast_over_generate']:.2f}x, "
          f"HF path / generate = {result['hf_path_over_generate']:.2f}x")
    print(f"shared prefill: fast / fast unshared = {result['fast_over_fast_unshared']:.3f}x "
          f"(unshared / generate = {result['fast_unshared_over_generate']:.2f}x); tokens identical: "
          f"{result['share_prefill_tokens_identical']}, max |logp diff| "
          f"{result['share_prefill_max_abs_logprob_diff']:.3g}; load (1 min) {load_before:.1f} -> "
          f"{result['load_before_after'][1]:.1f}")
    if args.workers:
        print(f"LocalPoolEngine, {args.workers} workers: {result['pool_tokens_per_s']:.0f} tok/s; pool / generate = "
              f"{result['pool_over_generate']:.2f}x, pool / fast = {result['pool_over_fast']:.2f}x; each worker's "
              f"own pages after the calls: {', '.join(f'{m:.0f}' for m in result['pool_worker_private_mib'])} MiB")
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
