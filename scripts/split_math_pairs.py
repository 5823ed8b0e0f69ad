"""Add labelled maths pairs to the dev / holdout files, keeping every existing row where it is.

    python scripts/split_math_pairs.py NEW.jsonl [NEW2.jsonl ...]   # merge, split, rewrite
    python scripts/split_math_pairs.py --check                      # validate only

A row already in either file never moves (the verifier author has read the dev file while it
grew, so a row must not migrate from dev into the holdout later). New rows are shuffled per
category with a fixed seed and sent to the holdout until that category's holdout share reaches
HOLDOUT_SHARE of its rows; the rest go to dev. Schema: tests/rewards/data/README.md.
"""

import argparse
import json
import random
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "tests" / "rewards" / "data"
DEV, HOLDOUT = DATA / "math_pairs.jsonl", DATA / "math_pairs_holdout.jsonl"
HOLDOUT_SHARE, SEED = 0.3, 15
CATEGORIES = (
    "integers_decimals", "fractions", "mixed_numbers", "long_decimals", "percent", "units_text",
    "equations", "inequalities", "intervals", "symbolic", "sqrt", "pi", "matrices", "tuples",
    "sets", "comma_lists", "multiple_boxes", "text_answers", "multiple_choice", "base_subscripts",
    "huge_expressions", "restated_question", "gold_forms", "delimiters", "model_responses",
)
FIELDS = {"id": str, "category": str, "response": str, "gold": str, "label": bool, "source": str}


def load(path: Path) -> list[dict]:
    """Rows of a jsonl file, each checked against the schema; errors name the file and line."""
    if not path.exists():
        return []
    rows = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            sys.exit(f"{path}:{n}: not JSON ({e.msg})")
        problem = check_row(row)
        if problem:
            sys.exit(f"{path}:{n}: {problem}")
        rows.append(row)
    return rows


def check_row(row) -> str | None:
    """The first schema problem of one row, or None."""
    if not isinstance(row, dict):
        return "row is not an object"
    for field, kind in FIELDS.items():
        if not isinstance(row.get(field), kind):
            return f"field {field!r} missing or not {kind.__name__}"
    extra = set(row) - set(FIELDS) - {"note"}
    if extra:
        return f"unknown field(s) {sorted(extra)}"
    if row["category"] not in CATEGORIES:
        return f"category {row['category']!r} is not one of CATEGORIES"
    if not row["source"].strip():
        return "field 'source' is empty"
    if "note" in row and not isinstance(row["note"], str):
        return "field 'note' is not str"
    return None


def check_unique(rows: list[dict]) -> None:
    ids, pairs = set(), set()
    for row in rows:
        if row["id"] in ids:
            sys.exit(f"duplicate id {row['id']!r}")
        if (row["response"], row["gold"]) in pairs:
            sys.exit(f"duplicate (response, gold) pair at id {row['id']!r}")
        ids.add(row["id"])
        pairs.add((row["response"], row["gold"]))


def assign(dev: list[dict], hold: list[dict], new: list[dict]) -> None:
    """Append each new row to dev or hold (in place), per category, toward HOLDOUT_SHARE."""
    by_cat: dict[str, list[dict]] = {}
    for row in new:
        by_cat.setdefault(row["category"], []).append(row)
    for cat in sorted(by_cat):
        fresh = sorted(by_cat[cat], key=lambda r: r["id"])
        random.Random(f"{SEED}:{cat}").shuffle(fresh)
        n_hold = sum(r["category"] == cat for r in hold)
        n_all = n_hold + sum(r["category"] == cat for r in dev) + len(fresh)
        want = round(HOLDOUT_SHARE * n_all)
        for row in fresh:
            (hold if n_hold < want else dev).append(row)
            n_hold += n_hold < want


def write(path: Path, rows: list[dict]) -> None:
    rows = sorted(rows, key=lambda r: (r["category"], r["id"]))
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("new", nargs="*", type=Path, help="jsonl files of rows to add")
    ap.add_argument("--check", action="store_true", help="validate the two files and stop")
    args = ap.parse_args()
    dev, hold = load(DEV), load(HOLDOUT)
    new = [row for path in args.new for row in load(path)]
    check_unique(dev + hold + new)
    if args.check or not new:
        print(f"ok: {len(dev)} dev, {len(hold)} holdout rows")
        return
    assign(dev, hold, new)
    write(DEV, dev)
    write(HOLDOUT, hold)
    print(f"added {len(new)}: now {len(dev)} dev, {len(hold)} holdout rows")


if __name__ == "__main__":
    main()
