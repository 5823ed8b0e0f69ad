"""(compute, reward) points from a run folder's metrics.jsonl or from a CSV.

Run folder (`runs/<name>/metrics.jsonl`, one JSON object a step): the reward is `y` (default
`eval/accuracy`, present on eval steps only), and the compute axis `x` is

    tokens:  compute/tokens_generated (cumulative completion tokens); for runs made before
             it was logged, the sum over steps s <= t of
             throughput/tokens_per_s[s] * time/step_s[s]   (= the step's completion tokens)
    seconds: time/elapsed_s (training seconds, summed across resumes)
    flops:   compute/flops (cumulative, 2 FLOPs per parameter per token forward, 6 forward +
             backward; see docs/metrics.md)

CSV: a header row, then one row a point. The compute column is named like `x` (`flops`,
`tokens`, `seconds`) or `compute`; the reward column is `y` (default `reward`). A point at
compute 0 is the reward before training: it fixes R0 instead of entering the fit.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rlvr.scaling.fit import FitError

AXES = ("flops", "tokens", "seconds")


@dataclass(frozen=True)
class CurvePoints:
    """Points of one run: compute (N,) > 0, reward (N,), sorted by compute; r0 from a point at 0."""

    name: str
    compute: np.ndarray
    reward: np.ndarray
    x: str
    y: str
    r0: float | None = None


def read_points(path: str | Path, x: str, y: str | None = None) -> CurvePoints:
    """A run folder (holds metrics.jsonl) or a .csv file → its points."""
    if x not in AXES:
        raise FitError(f"--x {x!r}: expected one of {', '.join(AXES)}")
    path = Path(path)
    if path.is_dir():
        return read_run_folder(path, x, y or "eval/accuracy")
    if path.is_file():
        return read_csv(path, x, y or "reward")
    raise FitError(f"{path}: no such run folder or CSV file")


def read_metrics(path: Path) -> list[dict]:
    """The rows of metrics.jsonl; a malformed line fails with file:line."""
    rows = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise FitError(f"{path}:{lineno}: not valid JSON ({e.msg})") from None
            if not isinstance(row, dict) or "step" not in row:
                raise FitError(f"{path}:{lineno}: expected a JSON object with a 'step'")
            rows.append(row)
    return sorted(rows, key=lambda r: r["step"])


def compute_column(rows: list[dict], x: str, where: Path) -> np.ndarray:
    """Compute after each step (S,) on axis x, see the module docstring."""
    logged = {"flops": "compute/flops", "tokens": "compute/tokens_generated"}.get(x)
    if logged and all(isinstance(r.get(logged), (int, float)) for r in rows):
        return np.array([float(r[logged]) for r in rows])
    if x == "flops":
        raise FitError(f"{where}: this run did not log 'compute/flops' (made before rlvr counted "
                       f"FLOPs); use --x tokens or --x seconds, or give a CSV with a 'flops' column")
    keys = ("throughput/tokens_per_s", "time/step_s") if x == "tokens" else ("time/elapsed_s",)
    for row in rows:
        missing = [k for k in keys if not isinstance(row.get(k), (int, float))]
        if missing:
            raise FitError(f"{where}: step {row['step']} has no {missing[0]!r}, needed for --x {x}")
    if x == "seconds":
        return np.array([float(r["time/elapsed_s"]) for r in rows])
    return np.cumsum([r["throughput/tokens_per_s"] * r["time/step_s"] for r in rows])


def read_run_folder(folder: Path, x: str, y: str) -> CurvePoints:
    """Points (compute after step t, y at step t) for every step that logged y."""
    metrics = folder / "metrics.jsonl"
    if not metrics.is_file():
        raise FitError(f"{folder}: no metrics.jsonl (is this a run folder?)")
    rows = read_metrics(metrics)
    compute = compute_column(rows, x, metrics)
    keep = [i for i, r in enumerate(rows) if isinstance(r.get(y), (int, float))]
    if not keep:
        raise FitError(f"{metrics}: no step logged {y!r} (set eval.every so the run evaluates)")
    return CurvePoints(folder.name, compute[keep], np.array([float(rows[i][y]) for i in keep]), x, y)


def read_csv(path: Path, x: str, y: str) -> CurvePoints:
    """Points from a CSV with a header; bad cells fail with file:line."""
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        header = reader.fieldnames or []
        x_col = x if x in header else "compute"
        if x_col not in header or y not in header:
            raise FitError(f"{path}:1: need a {x!r} (or 'compute') column and a {y!r} column, got {header}")
        points = [(_number(row[x_col], path, i, x_col, minimum=0.0), _number(row[y], path, i, y))
                  for i, row in enumerate(reader, start=2)]
    # The axis is named after the column read: a `compute` column is "compute", not the --x default.
    return points_from(path.stem, points, x_col, y, path)


def _number(cell: str | None, path: Path, lineno: int, column: str, minimum: float = -np.inf) -> float:
    try:
        value = float(cell)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise FitError(f"{path}:{lineno}: column {column!r} is {cell!r}, not a number") from None
    if not np.isfinite(value) or value < minimum:
        raise FitError(f"{path}:{lineno}: column {column!r} is {cell!r}; it must be a finite number"
                       + (f" >= {minimum:g}" if np.isfinite(minimum) else ""))
    return value


def points_from(name: str, points: list[tuple[float, float]], x: str, y: str, where: Path) -> CurvePoints:
    """Sort by compute; points at compute 0 set R0 (their mean reward)."""
    if not points:
        raise FitError(f"{where}: no rows")
    at_zero = [r for c, r in points if c == 0]
    rest = sorted((c, r) for c, r in points if c > 0)
    compute = np.array([c for c, _ in rest])
    reward = np.array([r for _, r in rest])
    return CurvePoints(name, compute, reward, x, y, float(np.mean(at_zero)) if at_zero else None)
