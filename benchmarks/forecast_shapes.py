"""The curves of the forecast benchmark (forecast_curves.py): recorded runs and synthetic shapes.

Recorded: every run of the recipes table (docs/recipes/runs_*.json, made by benchmarks/recipes.py:
greedy accuracy on 200 held-out problems every few steps; step 0 is the model before training,
so it fixes R0). Compute is the step (each recipe's steps cost the same).

Synthetic, each with eval points evenly spaced in compute (as `eval.every` makes them), the last
point the final value, and Gaussian noise of sd 0.005 to 0.04 (a 150- to 10,000-prompt eval):

- `sigmoid`: R0 + (A - R0) / (1 + (C_mid / C)^B), the run ending 1 to 30 x C_mid;
- `plateau`: the same with C_mid early (0.05 to 0.3 of the run), flat for most of it;
- `late_rise`: a sigmoid that plateaus, then a second rise of 0.05 to 0.2 late in the run;
- `collapse`: a sigmoid, then a fall of 0.05 to 0.3 starting in the second half (instability).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SHAPES = ("sigmoid", "plateau", "late_rise", "collapse")
SHARES = (0.45, 0.25, 0.15, 0.15)  # of the synthetic curves: mostly clean runs, 30% that break the sigmoid


@dataclass(frozen=True)
class Curve:
    """One whole run: compute (N,) > 0 ascending, reward (N,), R0 when known, its kind."""

    name: str
    kind: str
    compute: np.ndarray
    reward: np.ndarray
    r0: float | None


def recorded_curves() -> list[Curve]:
    """Every run in docs/recipes/runs_*.json, named task/recipe/seed."""
    out = []
    for path in sorted((REPO / "docs" / "recipes").glob("runs_*.json")):
        task = path.stem.removeprefix("runs_")
        for recipe, runs in json.loads(path.read_text(encoding="utf-8")).items():
            for seed, run in enumerate(runs):
                points = np.array(run["curve"], dtype=np.float64)
                r0 = float(points[0, 1]) if points[0, 0] == 0 else None
                rest = points[points[:, 0] > 0]
                out.append(Curve(f"{task}/{recipe}/{seed}", "recorded", rest[:, 0], rest[:, 1], r0))
    return out


def sigmoid(c, r0, a, b, c_mid):
    return r0 + (a - r0) / (1.0 + (c_mid / c) ** b)


def synthetic_curve(rng: np.random.Generator, kind: str, name: str) -> Curve:
    """One curve of `kind` (see the module docstring), with its own random parameters."""
    n = int(rng.integers(8, 31))
    compute = np.linspace(1.0, 100.0, n) * 10 ** rng.uniform(2, 6)
    end = compute[-1]
    r0 = rng.uniform(0.0, 0.4)
    a = min(1.0, r0 + rng.uniform(0.1, 0.6))
    b = float(np.exp(rng.uniform(np.log(0.5), np.log(4.0))))
    early = {"plateau": (0.05, 0.3), "late_rise": (0.05, 0.2)}
    c_mid = end * rng.uniform(*early[kind]) if kind in early else end / rng.uniform(1.0, 30.0)
    mean = sigmoid(compute, r0, a, b, c_mid)
    if kind == "late_rise":
        rise = rng.uniform(0.05, 0.2)
        mean = mean + rise / (1.0 + np.exp(-(compute / end - rng.uniform(0.55, 0.8)) / 0.05))
    if kind == "collapse":
        start = rng.uniform(0.5, 0.85) * end
        mean = mean - rng.uniform(0.05, 0.3) * np.clip((compute - start) / (end - start), 0, 1)
    noise = float(np.exp(rng.uniform(np.log(0.005), np.log(0.04))))
    reward = np.clip(mean + rng.normal(0.0, noise, n), 0.0, 1.0)
    return Curve(name, kind, compute, reward, r0 if rng.random() < 0.5 else None)


def synthetic_curves(count: int, seed: int) -> list[Curve]:
    """`count` curves in the shares SHARES of SHAPES, from one seed."""
    rng = np.random.default_rng(seed)
    kinds = rng.choice(SHAPES, size=count, p=SHARES)
    return [synthetic_curve(rng, str(kind), f"synthetic/{seed}/{i}/{kind}") for i, kind in enumerate(kinds)]


def truncate(curve: Curve, share: float) -> tuple[np.ndarray, np.ndarray] | None:
    """The points up to `share` of the final compute; None when fewer than 2 remain."""
    keep = curve.compute <= share * curve.compute[-1] + 1e-9
    if keep.sum() < 2:
        return None
    return curve.compute[keep], curve.reward[keep]
