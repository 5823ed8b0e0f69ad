"""Check the shape of the blind maths holdouts (math_pairs_holdout3.jsonl, ..._holdout4.jsonl)
and print their counts.

Standalone on purpose: it imports nothing from rlvr, so a holdout set can be checked without
touching the verifier it is meant to measure. tests/rewards/test_blind_pairs.py runs it.

    python tests/rewards/data/check_blind_pairs.py [path ...]
"""

import json
import sys
from collections import Counter
from pathlib import Path

DEFAULT_PATHS = [Path(__file__).with_name(f"math_pairs_holdout{n}.jsonl") for n in (3, 4)]
FIELDS = ("id", "category", "response", "gold", "label", "source")
CATEGORIES = (
    "integers_decimals",
    "fractions_mixed",
    "radicals_pi",
    "trig_log",
    "intervals_inequalities",
    "sets_tuples_multiple",
    "matrices_vectors",
    "units_percent",
    "sci_bases_repeating",
    "multiple_choice",
    "equations_expressions",
    "complex_numbers",
    "text_answers",
    "extraction_traps",
    "long_responses",
    "theoremqa_forms",  # holdout4 on
)


def row_problems(row: object) -> list[str]:
    """Return one message per problem with a parsed row (empty when it is well formed)."""
    if not isinstance(row, dict):
        return ["row is not a JSON object"]
    problems = [f"field {name!r} missing" for name in FIELDS if name not in row]
    problems += [f"field {name!r} not expected" for name in row if name not in FIELDS]
    for name in ("id", "category", "response", "gold", "source"):
        if name in row and not (isinstance(row[name], str) and row[name].strip()):
            problems.append(f"field {name!r} must be a non-empty string")
    if "label" in row and not isinstance(row["label"], bool):
        problems.append(f"field 'label' must be true or false, got {row['label']!r}")
    if isinstance(row.get("category"), str) and row["category"] not in CATEGORIES:
        problems.append(f"field 'category' has unknown value {row['category']!r}")
    return problems


def check(path: Path) -> tuple[list[dict], list[str]]:
    """Parse every line; return the good rows and 'file:line: problem' messages."""
    rows, errors, seen_ids = [], [], {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        where = f"{path}:{number}"
        if not line.strip():
            errors.append(f"{where}: blank line")
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.append(f"{where}: not valid JSON ({exc.msg})")
            continue
        problems = row_problems(row)
        errors += [f"{where}: {p}" for p in problems]
        if problems:
            continue
        if row["id"] in seen_ids:
            errors.append(f"{where}: id {row['id']!r} already used on line {seen_ids[row['id']]}")
        seen_ids[row["id"]] = number
        rows.append(row)
    return rows, errors


def print_counts(rows: list[dict]) -> None:
    by_cat = Counter((r["category"], r["label"]) for r in rows)
    print(f"{'category':<24}{'true':>6}{'false':>7}")
    for cat in CATEGORIES:
        print(f"{cat:<24}{by_cat[(cat, True)]:>6}{by_cat[(cat, False)]:>7}")
    n_true = sum(r["label"] for r in rows)
    print(f"{'total':<24}{n_true:>6}{len(rows) - n_true:>7}   rows={len(rows)} "
          f"true_share={n_true / max(len(rows), 1):.3f}")


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv[1:]] or DEFAULT_PATHS
    status = 0
    for path in paths:
        if not path.is_file():
            print(f"error: {path} does not exist", file=sys.stderr)
            return 2
        rows, errors = check(path)
        for message in errors:
            print(f"error: {message}", file=sys.stderr)
        print(path.name)
        print_counts(rows)
        status = max(status, 1 if errors else 0)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
