"""Evaluation on environments: k episodes per held-out task, summarised like n samples a prompt.

A task is played k times (seeded episodes, rlvr.orchestrate.episode_eval plays them through
the training run's `EpisodeRunner`). An episode **succeeds** when

    the environment ended it itself (its stop reason is not a runner limit: not max_turns,
    max_tokens, max_tool_calls, wall_time or env_error)  and  r_T >= threshold,

with r_T the terminal task reward (the reward of the environment's last step: 1 for a solved
game, the verifier's score of an answer) and `threshold` 1.0 by default (`SUCCESS_THRESHOLD`,
the single-turn evaluation's "correct"). An environment that raised therefore fails, with
stop reason `env_error`. With c successes of a task's k episodes:

    success@1  = c / k                       (mean success; the estimate of pass@1)
    pass@k'    = 1 - C(k - c, k') / C(k, k') (Chen et al. 2021, eq. 1; rlvr.evaluate.passk)
    histogram  = {c: tasks with c successes out of k}, c = 0 .. k
    disagrees  = 0 < c < k                   (some episodes succeed, some fail)

each metric a mean over tasks with its 95% bootstrap interval over tasks (confidence.py).
Disagreeing tasks are ranked like disagreement.py's prompts: by the verdict entropy of c / k
(most balanced first), then in task order. This module is pure: no engine, no environment.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np

from rlvr.evaluate.confidence import bootstrap_mean
from rlvr.evaluate.disagreement import verdict_entropy
from rlvr.evaluate.passk import pass_at_k
from rlvr.evaluate.progress_file import Codec

SUCCESS_THRESHOLD = 1.0


@dataclass(frozen=True)
class EpisodeOutcome:
    """What the evaluation keeps of one finished episode.

    reward: r_T, the last step's reward (0.0 when no step ran).
    env_ended: the environment said done (not a runner limit, not a raise).
    record: the episode as samples.jsonl stores it (rlvr.envs.scored.episode_record), or None.
    """

    reward: float
    env_ended: bool
    turns: int
    tool_calls: int
    stop_reason: str
    error: str | None = None
    record: dict | None = None

    def success(self, threshold: float = SUCCESS_THRESHOLD) -> bool:
        return self.env_ended and self.reward >= threshold


@dataclass(frozen=True)
class TaskEpisodes:
    """The k episodes of one held-out task, in seed order."""

    prompt: str
    gold: str
    source: str
    outcomes: tuple[EpisodeOutcome, ...]

    @property
    def k(self) -> int:
        return len(self.outcomes)

    def successes(self, threshold: float = SUCCESS_THRESHOLD) -> int:
        return sum(o.success(threshold) for o in self.outcomes)


def check_tasks(tasks: Sequence[TaskEpisodes], ks: Sequence[int]) -> int:
    if not tasks:
        raise ValueError("no tasks to evaluate")
    sizes = {t.k for t in tasks}
    if len(sizes) != 1 or 0 in sizes:
        raise ValueError(f"every task needs the same number (>= 1) of episodes, got {sorted(sizes)}")
    n = sizes.pop()
    if bad := [k for k in ks if not 1 <= k <= n]:
        raise ValueError(f"pass@k needs 1 <= k <= {n} (the episodes per task), got k = {bad}")
    return n


def success_histogram(tasks: Sequence[TaskEpisodes], threshold: float = SUCCESS_THRESHOLD) -> dict[int, int]:
    """{c: tasks with exactly c successes} for every c in 0 .. k (zeros included)."""
    n = check_tasks(tasks, ())
    counts = Counter(t.successes(threshold) for t in tasks)
    return {c: counts.get(c, 0) for c in range(n + 1)}


def episode_stats(outcomes: Sequence[EpisodeOutcome]) -> dict:
    """Mean turns and tool calls per episode, the share of each stop reason, the raises."""
    m = max(1, len(outcomes))
    stops = Counter(o.stop_reason for o in outcomes)
    return {"episodes": len(outcomes), "turns_mean": sum(o.turns for o in outcomes) / m,
            "tool_calls_mean": sum(o.tool_calls for o in outcomes) / m,
            "stop_reasons": {r: c / m for r, c in sorted(stops.items())},
            "env_errors": sum(o.error is not None for o in outcomes)}


def summarize_episodes(tasks: Sequence[TaskEpisodes], ks: Sequence[int], *,
                       threshold: float = SUCCESS_THRESHOLD, seed: int = 0) -> dict:
    """results.json's "model" entry of an environment evaluation (see the module docstring)."""
    n = check_tasks(tasks, ks)
    c = np.array([t.successes(threshold) for t in tasks])  # (P,)
    pass_k = {str(k): bootstrap_mean(np.array([pass_at_k(n, int(ci), k) for ci in c]), seed=seed).as_dict()
              for k in ks}
    per_task = [{"source": t.source, "gold": t.gold, "k": n, "successes": int(ci),
                 "stop_reasons": dict(Counter(o.stop_reason for o in t.outcomes))} for t, ci in zip(tasks, c)]
    return {"tasks": len(tasks), "episodes_per_task": n, "threshold": threshold,
            "success_at_1": bootstrap_mean(c / n, seed=seed).as_dict(), "pass_at_k": pass_k,
            "histogram": {str(i): v for i, v in success_histogram(tasks, threshold).items()},
            "disagreements": int(((c > 0) & (c < n)).sum()),
            **episode_stats([o for t in tasks for o in t.outcomes]), "per_task": per_task,
            **_repo_entry(tasks, ks, seed)}


def _repo_entry(tasks: Sequence[TaskEpisodes], ks: Sequence[int], seed: int) -> dict:
    """{"repo": ...} for repository episodes (rlvr.evaluate.repo_eval), else {}."""
    from rlvr.evaluate.repo_eval import has_repo_records, repo_summary

    return {"repo": repo_summary(tasks, ks, seed)} if has_repo_records(tasks) else {}


def disagreeing_tasks(tasks: Sequence[TaskEpisodes], threshold: float = SUCCESS_THRESHOLD) -> list[dict]:
    """The tasks whose episodes disagree, ranked, each with a 1-based `rank` and its episodes."""
    rows = []
    for t in tasks:
        c = t.successes(threshold)
        if 0 < c < t.k:
            rows.append({"prompt": t.prompt, "gold": t.gold, "source": t.source, "k": t.k, "successes": c,
                         "verdict_entropy": verdict_entropy(c, t.k),
                         "episodes": [{"success": o.success(threshold), "reward": o.reward,
                                       "stop_reason": o.stop_reason, "error": o.error, "episode": o.record}
                                      for o in t.outcomes]})
    rows.sort(key=lambda r: -r["verdict_entropy"])  # stable: task order among equals
    return [{"rank": i + 1, **row} for i, row in enumerate(rows)]


def greedy_metrics(tasks: Sequence[TaskEpisodes], threshold: float = SUCCESS_THRESHOLD) -> dict[str, float]:
    """In training, the greedy episodes (one per task; docs/metrics.md): `eval/accuracy` is
    their success rate, `eval/env/*` their turns, tool calls, raises and stop reasons."""
    check_tasks(tasks, ())
    outcomes = [o for t in tasks for o in t.outcomes]
    stats = episode_stats(outcomes)
    out = {"eval/accuracy": sum(o.success(threshold) for o in outcomes) / len(outcomes),
           "eval/env/turns_mean": stats["turns_mean"], "eval/env/tool_calls_mean": stats["tool_calls_mean"],
           "eval/env/env_errors": float(stats["env_errors"])}
    out.update({f"eval/env/stop/{r}": share for r, share in stats["stop_reasons"].items()})
    return out


def sampled_metrics(tasks: Sequence[TaskEpisodes], ks: Sequence[int],
                    threshold: float = SUCCESS_THRESHOLD) -> dict[str, float]:
    """In training, the sampled episodes (eval.samples per task; docs/metrics.md): the mean
    success, pass@k for each k, and the share of tasks whose episodes disagree."""
    n = check_tasks(tasks, ks)
    c = [t.successes(threshold) for t in tasks]
    out = {"eval/success_rate": sum(c) / (n * len(tasks)),
           "eval/disagree_frac": sum(0 < ci < n for ci in c) / len(tasks)}
    out.update({f"eval/pass@{k}": sum(pass_at_k(n, ci, k) for ci in c) / len(tasks) for k in ks})
    return out


def task_to_dict(task: TaskEpisodes) -> dict:
    """A task's episodes as a progress file stores them (progress_file.py)."""
    return {"prompt": task.prompt, "gold": task.gold, "source": task.source,
            "outcomes": [asdict(o) for o in task.outcomes]}


def task_from_dict(row: dict) -> TaskEpisodes:
    return TaskEpisodes(row["prompt"], row["gold"], row["source"],
                        tuple(EpisodeOutcome(**o) for o in row["outcomes"]))


TASK_CODEC = Codec(task_to_dict, task_from_dict)
TRAJECTORIES = 4  # episodes report.html renders turn by turn


def episode_rows(tasks: Sequence[TaskEpisodes], threshold: float = SUCCESS_THRESHOLD) -> list[dict]:
    """Every episode as episodes.jsonl holds it, tasks in order, each task's in seed order."""
    return [{"source": t.source, "prompt": t.prompt, "gold": t.gold, "index": i, "success": o.success(threshold),
             "reward": o.reward, "stop_reason": o.stop_reason, "error": o.error, "episode": o.record}
            for t in tasks for i, o in enumerate(t.outcomes)]


def sample_trajectories(rows: list[dict], count: int = TRAJECTORIES) -> list[dict]:
    """The first count // 2 successful episodes and the first failed ones (in episodes.jsonl
    order), topped up from the other kind when one is short: what the report shows."""
    wins, losses = [r for r in rows if r["success"]], [r for r in rows if not r["success"]]
    half = count // 2
    take_wins = min(len(wins), max(half, count - len(losses)))
    return wins[:take_wins] + losses[:count - take_wins]
