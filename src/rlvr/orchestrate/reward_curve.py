"""The reward-curve PNG of a run: training reward per step and held-out accuracy."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on servers and CI
import matplotlib.pyplot as plt  # noqa: E402


def plot_reward_curve(metrics: list[dict], out: Path, window: int = 20,
                      accuracy_before: float | None = None) -> Path:
    """Plot per-step train reward (raw and smoothed) and held-out accuracy; the accuracy
    measured before training, when given, is drawn at step 0."""
    steps = [m["step"] for m in metrics if m.get("reward/mean") is not None]
    reward = [m["reward/mean"] for m in metrics if m.get("reward/mean") is not None]
    smooth = [sum(reward[max(0, i - window + 1):i + 1]) / len(reward[max(0, i - window + 1):i + 1])
              for i in range(len(reward))]
    evals = [(m["step"], m["eval/accuracy"]) for m in metrics if m.get("eval/accuracy") is not None]
    if accuracy_before is not None:
        evals.insert(0, (0, accuracy_before))
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(steps, reward, color="tab:blue", alpha=0.25, label="train reward (per step)")
    ax.plot(steps, smooth, color="tab:blue", label=f"train reward ({window}-step mean)")
    if evals:
        ax.plot(*zip(*evals), "o-", color="tab:red", label="held-out greedy accuracy")
    ax.set_xlabel("step")
    ax.set_ylabel("reward / accuracy")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out
