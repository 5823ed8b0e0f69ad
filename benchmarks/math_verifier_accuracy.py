"""Accuracy of rlvr's maths verifier against bare math-verify on the labelled pairs of issue 15.

    python benchmarks/math_verifier_accuracy.py [--split dev|holdout|all] [--file F.jsonl]
        [--limit 5] [--misses] [--json OUT]

Data: tests/rewards/data/math_pairs{,_holdout}.jsonl (schema and labelling rules in that
folder's README). A side is right on a row when its verdict equals the row's label.

- rlvr: the reward function exactly as training builds it,
  `build_reward_fn(RewardSection(verifier="math"))(response, gold).score` (a score >= 0.5 counts
  as "correct"); if that path no longer builds, `rlvr.rewards.MathVerifier()`.
- math-verify: as a user calls it, `verify(parse(gold), parse(response))` with its default
  options and its own time-outs; an exception counts as False.

Each side runs in its own worker process, one pair at a time; a pair that has not come back
within --limit seconds is False, the worker is killed and restarted, so neither a hang in sympy
nor one in rlvr can stall the run (math-verify's signal-based time-outs cannot interrupt a single
huge integer power). Throughput is pairs / summed per-pair wall time in the parent (same
harness for both sides, the first warm-up call excluded), with os.getloadavg() before and after.
"""

import argparse
import json
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "tests" / "rewards" / "data"
SPLITS = {"dev": ["math_pairs.jsonl"], "holdout": ["math_pairs_holdout.jsonl"],
          "all": ["math_pairs.jsonl", "math_pairs_holdout.jsonl"]}


def load_rows(paths: list[Path]) -> list[dict]:
    rows = []
    for path in paths:
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                row["response"], row["gold"], row["label"], row["category"]  # noqa: B018
            except (json.JSONDecodeError, KeyError, TypeError) as e:
                sys.exit(f"{path}:{n}: bad row ({e})")
            rows.append(row)
    return rows


def rlvr_checker():
    """The maths reward as training builds it, falling back to the bare class."""
    try:
        from rlvr.config.schema import RewardSection
        from rlvr.orchestrate.scoring import build_reward_fn

        fn = build_reward_fn(RewardSection(verifier="math"))
    except Exception as e:  # the build path moved: say so and score the class itself
        print(f"note: build_reward_fn failed ({type(e).__name__}: {e}); using MathVerifier()",
              file=sys.stderr)
        from rlvr.rewards import MathVerifier

        fn = MathVerifier()
    return lambda response, gold: fn(response=response, gold=gold).score >= 0.5


def math_verify_checker():
    import math_verify

    def check(response, gold):
        try:
            return bool(math_verify.verify(math_verify.parse(gold), math_verify.parse(response)))
        except Exception:
            return False

    return check


CHECKERS = {"rlvr": rlvr_checker, "math-verify": math_verify_checker}


def worker(side: str, conn) -> None:
    check = CHECKERS[side]()
    check("1", "1")  # warm-up: lazy imports and caches are not charged to the first row
    conn.send("ready")
    while True:
        response, gold = conn.recv()
        try:
            conn.send(bool(check(response, gold)))
        except Exception:
            conn.send(False)


class Side:
    """One checker in its own process; `score` returns (verdict, seconds, timed_out)."""

    def __init__(self, side: str, limit: float):
        self.side, self.limit, self.proc = side, limit, None

    def start(self) -> None:
        parent, child = mp.get_context("fork").Pipe()
        self.proc = mp.get_context("fork").Process(target=worker, args=(self.side, child), daemon=True)
        self.proc.start()
        self.conn = parent
        if not parent.poll(120) or parent.recv() != "ready":
            sys.exit(f"{self.side}: the worker did not start within 120 s")

    def score(self, response: str, gold: str) -> tuple[bool, float, bool]:
        if self.proc is None:
            self.start()
        t0 = time.perf_counter()
        self.conn.send((response, gold))
        if self.conn.poll(self.limit):
            return self.conn.recv(), time.perf_counter() - t0, False
        self.stop()
        return False, time.perf_counter() - t0, True

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.join()
            self.proc = None


def run_side(side: str, rows: list[dict], limit: float) -> dict:
    runner = Side(side, limit)
    runner.start()
    verdicts, seconds, timeouts = [], 0.0, 0
    for row in rows:
        verdict, dt, timed_out = runner.score(row["response"], row["gold"])
        verdicts.append(verdict)
        seconds += dt
        timeouts += timed_out
    runner.stop()
    return {"verdicts": verdicts, "seconds": seconds, "timeouts": timeouts,
            "pairs_per_s": len(rows) / seconds if seconds else float("inf")}


def pct(hits: list[bool]) -> float:
    return 100.0 * sum(hits) / len(hits) if hits else float("nan")


def source_families(rows: list[dict]) -> dict[str, list[int]]:
    """Row indices by origin: math-verify scores its own suite's cases well by construction."""
    families = {"from Math-Verify's tests": [], "from other public suites": [], "written for rlvr": []}
    for i, r in enumerate(rows):
        if r["source"].startswith("written for rlvr"):
            families["written for rlvr"].append(i)
        elif "Math-Verify" in r["source"]:
            families["from Math-Verify's tests"].append(i)
        else:
            families["from other public suites"].append(i)
    return {k: v for k, v in families.items() if v}


def tabulate(rows: list[dict], results: dict) -> dict:
    """Per-category and overall accuracy (% of rows where the verdict equals the label)."""
    right = {s: [v == r["label"] for v, r in zip(res["verdicts"], rows)] for s, res in results.items()}
    groups = {}
    for cat in sorted({r["category"] for r in rows}):
        groups[cat] = [i for i, r in enumerate(rows) if r["category"] == cat]
    groups["ALL"] = list(range(len(rows)))
    groups["on true pairs"] = [i for i, r in enumerate(rows) if r["label"]]
    groups["on false pairs"] = [i for i, r in enumerate(rows) if not r["label"]]
    for family, ix in source_families(rows).items():
        groups[family] = ix
    return {g: {"n": len(ix), **{s: pct([right[s][i] for i in ix]) for s in results}}
            for g, ix in groups.items()}


def print_report(table: dict, results: dict, load: dict) -> None:
    print(f"{'category':26s} {'n':>4s} {'rlvr %':>7s} {'m-v %':>7s} {'delta':>7s}")
    for group, fig in table.items():
        if group == "ALL":
            print("-" * 55)
        print(f"{group:26s} {fig['n']:4d} {fig['rlvr']:7.1f} {fig['math-verify']:7.1f} "
              f"{fig['rlvr'] - fig['math-verify']:+7.1f}")
    r, m = results["rlvr"], results["math-verify"]
    print(f"\nthroughput: rlvr {r['pairs_per_s']:.1f} pairs/s ({r['timeouts']} timeouts), "
          f"math-verify {m['pairs_per_s']:.1f} pairs/s ({m['timeouts']} timeouts), "
          f"ratio rlvr/math-verify {r['pairs_per_s'] / m['pairs_per_s']:.2f}")
    print(f"load average (1, 5, 15 min): before {load['before']}, after {load['after']}")


def misses(rows: list[dict], verdicts: list[bool]) -> list[dict]:
    return [{"id": r["id"], "category": r["category"], "label": r["label"],
             "response": r["response"][-160:], "gold": r["gold"][-120:]}
            for r, v in zip(rows, verdicts) if v != r["label"]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", choices=sorted(SPLITS), default="all")
    ap.add_argument("--file", type=Path, action="append", help="score this jsonl instead")
    ap.add_argument("--limit", type=float, default=5.0, help="seconds per pair per side")
    ap.add_argument("--misses", action="store_true", help="list the rows rlvr gets wrong")
    ap.add_argument("--json", type=Path, help="write the figures here")
    args = ap.parse_args()
    paths = args.file or [DATA / name for name in SPLITS[args.split]]
    for path in paths:
        if not path.exists():
            sys.exit(f"no such file: {path}")
    rows = load_rows(paths)
    load = {"before": [round(x, 2) for x in os.getloadavg()]}
    results = {side: run_side(side, rows, args.limit) for side in CHECKERS}
    load["after"] = [round(x, 2) for x in os.getloadavg()]
    table = tabulate(rows, results)
    print(f"{len(rows)} pairs from {', '.join(p.name for p in paths)}\n")
    print_report(table, results, load)
    missed = misses(rows, results["rlvr"]["verdicts"])
    if args.misses:
        print(f"\nrlvr misses ({len(missed)}):")
        for m in missed:
            print(f"  {m['id']} [{m['category']}] label={m['label']} gold={m['gold']!r} "
                  f"response={m['response']!r}")
    if args.json:
        out = {"files": [p.name for p in paths], "limit_s": args.limit, "table": table, "load": load,
               "throughput": {s: {k: res[k] for k in ("pairs_per_s", "seconds", "timeouts")}
                              for s, res in results.items()},
               "rlvr_misses": missed,
               "rows": [{"id": r["id"], "label": r["label"], "rlvr": v, "math-verify": w}
                        for r, v, w in zip(rows, results["rlvr"]["verdicts"],
                                           results["math-verify"]["verdicts"])]}
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
