"""rlvr against TRL's `GRPOTrainer` on the same GRPO work, alternating runs in one command.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/vs_trl.py [--only w1,demo,g1..g8] [--rounds 2]
        [--steps N] [--quick] [--dry-run] [--no-async] [--gradient-checkpointing] [--rollout-workers N]
        [--pss] [--out FILE.json]

Every run is its own process (`benchmarks/vs_trl_sides.py`), so peak RSS is per run, and the
runs alternate: rlvr, TRL(, rlvr async), rlvr, TRL, ... per workload, so that the shared
machine's load drifts over both sides; each run prints `os.getloadavg()` before and after.
Only ratios of runs next to each other in time are meant to carry over.

Both sides load the same saved weights and tokenizer, get the same prompts at every step (TRL's
dataset is written in the order rlvr's prompt sampler draws), and sample with the same
settings (temperature 1, top_p 1, no top_k, the same max / min new tokens); the reward is the
same function. What cannot be made identical is printed (DIFFERENCES).

Workloads:
  w1    `arith64-tinyqwen2-g8-v1` (shared/bench/WORKLOAD.md): 3.97M-parameter Qwen2, 8 x 8
        completions of exactly 64 tokens, token-mean loss, lr 1e-5, 10 steps.
  demo  recipes/demo.toml on models/tiny-arith (0.5M parameters, 64-token context): 16 x 8
        completions of at most 8 tokens, the maths verifier, seq-mean-token-mean loss.
  g1-g8 a grid of random-weight Qwen2 models (4M: hidden 256 x 4 layers; 30M: hidden 512 x 8
        layers; 104M: hidden 768 x 12 layers, g8) over completion length 32 / 64 / 256 / 512, group
        size 8 / 16 / 32 and vocabulary 128 / 32k, with a 512-token context (1024 for g7, whose
        rows are 22 + 512 tokens). Points marked rollout-bound also run rlvr with
        `orchestrate.mode=async`, `max_staleness=1` beside its sync mode.
`--quick` runs g1 and g2 with 3 steps and one round (a smoke test, a few minutes);
`--dry-run` prints the plan and the differences and runs nothing.
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
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
THREADS = 2
sys.path.insert(0, str(HERE))

SMALL = dict(hidden_size=256, intermediate_size=1024, num_layers=4, num_heads=4, num_kv_heads=2)
LARGE = dict(hidden_size=512, intermediate_size=2048, num_layers=8, num_heads=8, num_kv_heads=2)
# g7's 22-token prompts + 512 new tokens need more than the grid's 512-token context.
LONG = dict(SMALL, max_positions=1024)
# 103.9M parameters at V = 128 (12 layers x 8.65M + the tied head): the 100M+ point.
HUGE = dict(hidden_size=768, intermediate_size=3072, num_layers=12, num_heads=12, num_kv_heads=4)
# name: (model, vocab, group, prompts per step, completion tokens, steps, rollout-bound)
GRID = {
    "g1": (SMALL, 128, 8, 2, 64, 4, False),
    "g2": (SMALL, 128, 8, 2, 256, 4, True),
    "g3": (SMALL, 128, 32, 2, 64, 4, False),
    "g4": (SMALL, 32000, 8, 2, 64, 4, False),
    "g5": (LARGE, 128, 8, 2, 64, 4, False),
    "g6": (SMALL, 32000, 32, 1, 256, 3, True),
    "g7": (LONG, 128, 16, 2, 512, 3, True),
    "g8": (HUGE, 128, 8, 1, 32, 3, False),
}
ALL = ["w1", "demo", *GRID]

DIFFERENCES = [
    "random streams: the same seed does not give the same samples (rlvr samples through its own "
    "decode path, TRL through model.generate), so the completions differ; the token counts do not "
    "(EOS is suppressed except in the demo, where lengths are up to 8 tokens and are reported)",
    "old log-probs: rlvr keeps the sampler's log-probs as pi_old; TRL (one update per generation) "
    "uses the detached training forward, so neither pays an extra forward pass",
    "TRL's training forward also computes per-token entropies (for its logs); rlvr's does not",
    "group std: rlvr's own std (see rlvr.algo); TRL's torch.std (unbiased); both add eps 1e-4",
    "aggregation: rlvr token_mean = TRL loss_type 'dapo'; rlvr seq_mean_token_mean = TRL 'grpo'",
    "per-step work outside the update: rlvr writes its metrics and rollout rows to a run folder and "
    "syncs weights into its engine; TRL logs to its Trainer state; neither evaluates or checkpoints "
    "during the timed steps (rlvr writes one checkpoint after the last step, outside them)",
    "demo reward: rlvr's maths verifier as the recipe configures it (with its time limit); TRL calls "
    "rlvr.rewards.MathVerifier() directly",
    "peak RSS includes each side's imports (TRL also imports datasets and accelerate); the RSS "
    "after import is shown beside it",
]


def specs(name: str, root: Path, steps: int | None, checkpointing: bool = False, rollout_workers: int = 1,
          pss: bool = False) -> dict:
    """The settings both sides share for workload `name`; builds its model and prompt files."""
    if name == "w1":
        from step_throughput import MODEL, check_setup, make_prompts
        model = dict(MODEL)
        out = dict(group=8, prompts_per_step=8, new_tokens=64, min_new_tokens=64, steps=10,
                   aggregation="token_mean", lr=1e-5, micro_batch=64, reward="last_int", rollout_bound=False)
        out["model_dir"] = save_model(root / name, model, 128, check=check_setup)
        out["prompts_path"] = write_rows(root / name, [(p, g) for p, g in make_prompts()])
    elif name == "demo":
        from rlvr.tasks.arithmetic import arithmetic_splits
        train, _ = arithmetic_splits(seed=0, test_size=500)
        out = dict(group=8, prompts_per_step=16, new_tokens=8, min_new_tokens=0, steps=30,
                   aggregation="seq_mean_token_mean", lr=3e-5, micro_batch=128, reward="math",
                   rollout_bound=True, recipe=str(REPO / "recipes" / "demo.toml"),
                   model_dir=str(REPO / "models" / "tiny-arith"))
        out["prompts_path"] = write_rows(root / name, [(s.prompt, s.answer) for s in train])
    else:
        model, vocab, group, per_step, tokens, n, bound = GRID[name]
        out = dict(group=group, prompts_per_step=per_step, new_tokens=tokens, min_new_tokens=tokens, steps=n,
                   aggregation="token_mean", lr=1e-5, micro_batch=group * per_step, reward="last_int",
                   rollout_bound=bound, vocab=vocab)
        from step_throughput import make_prompts
        out["model_dir"] = save_model(root / name, {**model, "vocab_size": vocab, "seed": 20240601}, vocab)
        out["prompts_path"] = write_rows(root / name, make_prompts())
    out.update(name=name, threads=THREADS, max_staleness=0, mode="sync", gradient_checkpointing=checkpointing,
               rollout_workers=rollout_workers, pss=pss)
    if steps is not None:
        out["steps"] = steps
    return out


def save_model(folder: Path, model: dict, vocab: int, check=None) -> str:
    from transformers.utils import logging as hf_logging

    from rlvr.models import build_char_tokenizer, tiny_qwen2

    hf_logging.disable_progress_bar()
    folder.mkdir(parents=True, exist_ok=True)
    net, tok = tiny_qwen2(**{**model, "vocab_size": vocab}), build_char_tokenizer(vocab)
    if check is not None:
        check(net, tok)
    net.save_pretrained(folder / "model")
    tok.save_pretrained(folder / "model")
    (folder / "params").write_text(str(sum(p.numel() for p in net.parameters())))
    return str(folder / "model")


def write_rows(folder: Path, rows) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "prompts.jsonl"
    path.write_text("".join(json.dumps({"prompt": p, "answer": str(a)}) + "\n" for p, a in rows))
    return str(path)


def plan(spec: dict, rounds: int, with_async: bool, workers: tuple[int, ...] | None = None) -> list[dict]:
    """The runs of one workload in the order they run: rlvr (once per `workers` value, the
    spec's own by default), TRL(, rlvr async with the first value), per round."""
    workers = workers or (spec.get("rollout_workers", 1),)
    runs = []
    for _ in range(rounds):
        runs += [{**spec, "side": "rlvr", "rollout_workers": w} for w in workers]
        runs.append({**spec, "side": "trl"})
        if with_async and spec["rollout_bound"]:
            runs.append({**spec, "side": "rlvr", "mode": "async", "max_staleness": 1, "rollout_workers": workers[0]})
    return runs


def summaries_by_workers(name: str, spec: dict, results: list[dict]) -> list[dict]:
    """One summary per rollout-workers value rlvr's sync runs used, each against the same TRL
    runs (and the async ones); named "w1 (2 workers)" when there are several."""
    values = sorted({r.get("rollout_workers", 1) for r in results if r["side"] == "rlvr" and r["mode"] == "sync"})
    out = []
    for w in values:
        picked = [r for r in results if r["side"] == "trl" or r["mode"] == "async" or r.get("rollout_workers", 1) == w]
        summary = summarize(name if len(values) == 1 else f"{name} ({w} workers)", spec, picked)
        out.append({**summary, "name": name, "rollout_workers": w})
    return out


class RunFailed(Exception):
    pass


def run_one(spec: dict, root: Path) -> dict:
    tag = f"{spec['name']}-{spec['side']}-{spec['mode']}-{len(list(root.glob('*.out.json')))}"
    spec_path, out_path = root / f"{tag}.spec.json", root / f"{tag}.out.json"
    spec_path.write_text(json.dumps(spec))
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE",
           "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(HERE), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, str(HERE / "vs_trl_sides.py"), str(spec_path), str(out_path)],
                          env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
        raise RunFailed(f"vs_trl: the {spec['side']} ({spec['mode']}) run of {spec['name']} failed:\n{tail}")
    result = {**json.loads(out_path.read_text()), "rollout_workers": spec.get("rollout_workers", 1)}
    lb, la = result["load_before"], result["load_after"]
    print(f"  {spec['name']:5s} {spec['side']:4s} {spec['mode']:5s} {result['s_per_step']:7.3f} s/step  "
          f"peak RSS {result['peak_rss_mib']:6.0f} MiB  load {lb[0]:.1f} -> {la[0]:.1f}", flush=True)
    return result


def summarize(name: str, spec: dict, results: list[dict]) -> dict:
    """Ratios of runs next to each other: each rlvr sync run over the TRL run after it."""
    sync = [r for r in results if r["side"] == "rlvr" and r["mode"] == "sync"]
    trl = [r for r in results if r["side"] == "trl"]
    asy = [r for r in results if r["mode"] == "async"]
    ratio = [a["s_per_step"] / b["s_per_step"] for a, b in zip(sync, trl)]
    med = lambda rs, k: statistics.median(r[k] for r in rs)  # noqa: E731
    out = {"workload": name, "rounds": len(trl), "s_per_step_ratio": ratio,
           "s_per_step_ratio_median": statistics.median(ratio),
           "rss_ratio": med(sync, "peak_rss_mib") / med(trl, "peak_rss_mib"),
           "pss_ratio": (med(sync, "peak_tree_pss_mib") / med(trl, "peak_tree_pss_mib")
                         if sync[0].get("peak_tree_pss_mib") is not None else None),
           "rlvr": _side(sync), "trl": _side(trl),
           "loads": [(r["side"], r["mode"], r["load_before"][0], r["load_after"][0]) for r in results]}
    if asy:
        out["async"] = _side(asy)
        out["async_over_sync"] = [a["s_per_step"] / s["s_per_step"] for s, a in zip(sync, asy)]
    return out


def _side(rs: list[dict]) -> dict:
    med = lambda k: statistics.median(r[k] for r in rs)  # noqa: E731
    out = {k: med(k) for k in ("s_per_step", "generation_s", "scoring_s", "training_s", "peak_rss_mib",
                               "rss_after_import_mib")}
    pss = [r["peak_tree_pss_mib"] for r in rs if r.get("peak_tree_pss_mib") is not None]
    out["peak_tree_pss_mib"] = statistics.median(pss) if pss else None
    out["completion_tokens"] = statistics.median(t for r in rs for t in r["completion_tokens"])
    return out


def print_table(summaries: list[dict], specs_by_name: dict) -> None:
    print("\n| workload | settings | rlvr / TRL s/step (per round) | rlvr s/step | TRL s/step | "
          "rlvr gen / score / train s | TRL gen / score / train s | completion tokens/step rlvr / TRL | peak RSS rlvr / TRL MiB (ratio) | "
          "peak tree PSS rlvr / TRL MiB (ratio) | "
          "async / sync | load 1-min, before -> after each run |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for s in summaries:
        sp, r, t = specs_by_name[s.get("name", s["workload"])], s["rlvr"], s["trl"]
        loads = ", ".join(f"{side}{'-async' if mode == 'async' else ''} {a:.1f}->{b:.1f}"
                          for side, mode, a, b in s["loads"])
        split = lambda d: f"{d['generation_s']:.2f} / {d['scoring_s']:.3f} / {d['training_s']:.2f}"  # noqa: E731
        asy = ", ".join(f"{x:.2f}" for x in s.get("async_over_sync", [])) or "-"
        pss = (f"{r['peak_tree_pss_mib']:.0f} / {t['peak_tree_pss_mib']:.0f} ({s['pss_ratio']:.2f})"
               if s.get("pss_ratio") is not None else "-")
        print(f"| {s['workload']} | {describe(sp)} | **{s['s_per_step_ratio_median']:.2f}** "
              f"({', '.join(f'{x:.2f}' for x in s['s_per_step_ratio'])}) | {r['s_per_step']:.3f} | "
              f"{t['s_per_step']:.3f} | {split(r)} | {split(t)} | "
              f"{r['completion_tokens']:.0f} / {t['completion_tokens']:.0f} | {r['peak_rss_mib']:.0f} / {t['peak_rss_mib']:.0f} "
              f"({s['rss_ratio']:.2f}) | {pss} | {asy} | {loads} |")


def describe(sp: dict) -> str:
    params = Path(sp["model_dir"]).parent / "params"
    n = f"{int(params.read_text()) / 1e6:.1f}M" if params.exists() else "0.5M"
    return (f"{n}, V {sp.get('vocab', 128)}, G {sp['group']} x P {sp['prompts_per_step']}, "
            f"L {sp['new_tokens']}{'' if sp['min_new_tokens'] else ' max'}, {sp['steps']} steps")


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default=",".join(ALL), help=f"comma-separated workloads among {', '.join(ALL)}")
    ap.add_argument("--rounds", type=int, default=2, help="rlvr/TRL pairs per workload")
    ap.add_argument("--steps", type=int, help="steps per run for every workload (at least 2)")
    ap.add_argument("--quick", action="store_true", help="g1 and g2, 3 steps, one round")
    ap.add_argument("--dry-run", action="store_true", help="print the plan and the differences; run nothing")
    ap.add_argument("--no-async", action="store_true", help="skip rlvr's async runs")
    ap.add_argument("--out", type=Path, help="write every run's record and the summaries as JSON")
    ap.add_argument("--gradient-checkpointing", action="store_true",
                    help="both sides recompute activations in the backward (default: neither does); rlvr then "
                         "samples with a copy of the weights (engine_choice), which adds to its peak RSS")
    ap.add_argument("--pss", action="store_true",
                    help="sample each run's process-tree PSS at 10 Hz (a column of its own); the sampling costs "
                         "CPU time, so s/step from such runs is not comparable to runs without it")
    ap.add_argument("--rollout-workers", default="1",
                    help="rlvr samples in this many local processes over shared weights (orchestrate.rollout_workers, "
                         "rlvr.engines.local_pool); their peak (VmHWM, or PSS with --pss) is added to rlvr's. "
                         "A list (1,2) runs rlvr once per value in each round, beside the same TRL run")
    args = ap.parse_args()
    if args.quick:
        args.only, args.rounds, args.steps = "g1,g2", 1, 3
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in ALL]
    if unknown or not names:
        ap.error(f"--only: unknown workload(s) {', '.join(unknown) or '(none given)'}; choose among {', '.join(ALL)}")
    if args.steps is not None and args.steps < 2:
        ap.error("--steps must be at least 2 (step 1 is warm-up and left out)")
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    try:
        args.workers = tuple(int(w) for w in args.rollout_workers.split(","))
    except ValueError:
        ap.error(f"--rollout-workers: {args.rollout_workers!r} is not a comma-separated list of integers")
    if not args.workers or min(args.workers) < 1:
        ap.error("--rollout-workers: each value must be at least 1")
    args.names = names
    return args


def run_label(run: dict, with_workers: bool) -> str:
    label = run["side"] + ("-async" if run["mode"] == "async" else "")
    return label + (f" x{run['rollout_workers']}" if with_workers and run["side"] == "rlvr" else "")


def main() -> None:
    args = parse_args()
    print("What cannot be made identical between the sides:")
    for d in DIFFERENCES:
        print(f"  - {d}")
    with tempfile.TemporaryDirectory(prefix="vs_trl-") as tmp:
        root = Path(tmp)
        all_specs = {n: specs(n, root, args.steps, args.gradient_checkpointing, args.workers[0], args.pss)
                     for n in args.names}
        summaries, records, failed = [], [], []
        for name, spec in all_specs.items():
            runs = plan(spec, args.rounds, not args.no_async, args.workers)
            print(f"\n{name}: {describe(spec)}; runs in order: "
                  + ", ".join(run_label(r, len(args.workers) > 1) for r in runs), flush=True)
            if args.dry_run:
                continue
            try:
                results = [run_one(r, root) for r in runs]
            except RunFailed as e:  # report it, go on with the other workloads
                print(e, file=sys.stderr)
                failed.append(name)
                continue
            records += [{"workload": name, **r} for r in results]
            summaries += summaries_by_workers(name, spec, results)
            if args.out:  # after every workload, so that a long run keeps what it measured
                args.out.write_text(json.dumps({"summaries": summaries, "runs": records,
                                                "differences": DIFFERENCES}, indent=1) + "\n")
        if summaries:
            print_table(summaries, all_specs)
    if failed:
        raise SystemExit(f"vs_trl: failed workload(s): {', '.join(failed)}")


if __name__ == "__main__":
    main()
