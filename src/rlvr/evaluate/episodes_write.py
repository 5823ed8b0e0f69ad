"""The files of an evaluation on environments: results.json, disagreements.jsonl,
episodes.jsonl and report.html, from the summaries of episodes_eval.py and, for a comparison,
the paired differences of episodes_compare.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from rlvr.evaluate.episodes_compare import compare_episodes
from rlvr.evaluate.episodes_eval import (SUCCESS_THRESHOLD, TaskEpisodes, disagreeing_tasks, episode_rows,
                                         sample_trajectories, summarize_episodes)
from rlvr.evaluate.report_page import write_report


def write_episode_evaluation(out: Path, tasks: Sequence[TaskEpisodes], ks: Sequence[int], settings: dict, *,
                             threshold: float = SUCCESS_THRESHOLD, seed: int = 0,
                             compare_with: Sequence[TaskEpisodes] | None = None) -> dict:
    """results.json (settings and the summary; with `compare_with`, its summary and the paired
    differences, episodes_compare.py), disagreements.jsonl (the disagreeing tasks with their
    episodes), episodes.jsonl (every episode) and report.html in the folder `out` (the
    compared model's files end in _compare); returns the results."""
    out.mkdir(parents=True, exist_ok=True)
    results = {"settings": dict(settings), "model": summarize_episodes(tasks, ks, threshold=threshold, seed=seed)}
    disagreements, rows = disagreeing_tasks(tasks, threshold), episode_rows(tasks, threshold)
    _write_jsonl(out / "disagreements.jsonl", disagreements)
    _write_jsonl(out / "episodes.jsonl", rows)
    shown = {"model": sample_trajectories(rows)}
    if compare_with is not None:
        results["compare"] = {"model": summarize_episodes(compare_with, ks, threshold=threshold, seed=seed),
                              "diff": compare_episodes(tasks, compare_with, ks, threshold=threshold, seed=seed)}
        other = episode_rows(compare_with, threshold)
        _write_jsonl(out / "disagreements_compare.jsonl", disagreeing_tasks(compare_with, threshold))
        _write_jsonl(out / "episodes_compare.jsonl", other)
        shown["compare"] = sample_trajectories(other)
    else:  # a comparison written here before would not belong to these results
        for stale in ("disagreements_compare.jsonl", "episodes_compare.jsonl"):
            (out / stale).unlink(missing_ok=True)
    for stale in ("cot_judgements.jsonl", "cot_judgements_compare.jsonl"):  # a single-turn evaluation's
        (out / stale).unlink(missing_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    write_report(out / "report.html", results, disagreements, trajectories=shown)
    return results


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    with path.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
