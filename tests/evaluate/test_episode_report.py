"""report.html of an evaluation on environments (evaluate/episode_report.py through
report.write_report), the paired comparison of two models' episodes (episodes_compare.py)
and the progress-file codec of a task's episodes: hand-made tasks, no engine."""

from __future__ import annotations

import json
import re

import pytest

from rlvr.evaluate.episodes_compare import compare_episodes
from rlvr.evaluate.episodes_eval import (TASK_CODEC, EpisodeOutcome, TaskEpisodes, episode_rows,
                                         sample_trajectories)
from rlvr.evaluate.episodes_write import write_episode_evaluation
from rlvr.evaluate.summary import EvalError


def record(actions: list[str], observations: list[str]) -> dict:
    turns = [{"action": a, "observation": o, "reward": 0.0, "tool_calls": 0, "policy_tokens": len(a),
              "observation_tokens": len(o), "finish": "stop"} for a, o in zip(actions, observations)]
    return {"seed": 7, "turns": turns, "first_observation": "Guess a number from 1 to 20."}


WIN = EpisodeOutcome(1.0, True, 2, 0, "solved", record=record(["10", "<script>alert(1)</script>"],
                                                                 ["higher", "<b>solved</b>"]))
LOSS = EpisodeOutcome(0.0, False, 1, 0, "max_turns", record=record(["3"], ["higher"]))


def task(name: str, wins: int, k: int = 4) -> TaskEpisodes:
    return TaskEpisodes(f"prompt {name}", name, f"t/{name}", (WIN,) * wins + (LOSS,) * (k - wins))


A = [task("a", 0), task("b", 1), task("c", 2), task("d", 4)]
B = [task("a", 1), task("b", 1), task("c", 4), task("d", 0)]
SETTINGS = {"env": "guess_number", "model": "models/a", "compare": "models/b"}


def test_the_report_shows_the_headline_histogram_stop_reasons_and_escaped_turns(tmp_path):
    write_episode_evaluation(tmp_path, A, (1, 4), {"env": "guess_number", "model": "models/a"})
    page = (tmp_path / "report.html").read_text()
    # success@1 = (0 + 1 + 2 + 4) / 16 = 0.4375; pass@4 = 3 of 4 tasks.
    assert re.search(r"<td>success@1</td><td>0\.438 \[", page) and re.search(r"<td>pass@4</td><td>0\.750 \[", page)
    assert page.count("<img src='data:image/png;base64,") == 2  # the pass@k curve, tasks by successes
    assert "<td>max_turns</td><td>56.2%</td>" in page and "<td>solved</td><td>43.8%</td>" in page  # 9 / 16, 7 / 16
    assert "<td>t/c</td><td>prompt c</td><td>c</td><td>2/4</td>" in page  # the top disagreement
    # The model's text is untrusted: a <script> in an action (and markup in an observation) is shown, escaped.
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<b>solved</b>" not in page and "&lt;b&gt;solved&lt;/b&gt;" in page
    # Two wins and two losses, turn by turn: policy and observation blocks told apart.
    assert page.count("<h3>task ") == 4 and page.count("success, stop reason solved") == 2
    assert page.count("<div class='turn policy'>") == 2 * 2 + 2 * 1
    assert page.count("<div class='turn observation'>") == 4 + 2 * 2 + 2 * 1  # first observations + one a turn


def test_trajectories_shown_are_the_first_wins_and_losses_topped_up_from_the_other_kind():
    rows = episode_rows(A)
    picked = sample_trajectories(rows)
    assert [(r["source"], r["index"], r["success"]) for r in picked] == [
        ("t/b", 0, True), ("t/c", 0, True), ("t/a", 0, False), ("t/a", 1, False)]
    only_wins = episode_rows([task("d", 4)])
    assert len(sample_trajectories(only_wins)) == 4 and all(r["success"] for r in sample_trajectories(only_wins))


def test_compare_gives_paired_task_differences_and_the_solved_and_lost_tasks():
    d = compare_episodes(A, B, (1, 2))
    # Per-task success rate B - A: a 1/4 - 0, b 0, c 4/4 - 2/4, d 0 - 1 → mean (1/4 + 0 + 1/2 - 1) / 4 = -1/16.
    assert d["success_at_1_diff"]["mean"] == pytest.approx(-1 / 16)
    assert [r["success_diff"] for r in d["per_task"]] == pytest.approx([0.25, 0.0, 0.5, -1.0])
    # pass@2 per task (1 - C(4 - c, 2) / 6): A 0, 1/2, 5/6, 1; B 1/2, 1/2, 1, 0 → mean diff (1/2 + 0 + 1/6 - 1) / 4.
    assert d["pass_at_k_diff"]["2"]["mean"] == pytest.approx((1 / 2 + 1 / 6 - 1) / 4)
    ch = d["changes"]
    assert (ch["solved"], ch["lost"], ch["better"], ch["worse"], ch["same"]) == (1, 1, 2, 1, 1)
    assert [r["prompt"] for r in ch["solved_prompts"]] == ["prompt a"] and ch["lost_prompts"][0]["gold"] == "d"
    low, high = d["success_at_1_diff"]["ci"]
    assert low <= -1 / 16 <= high
    assert compare_episodes(A, A, (1,))["success_at_1_diff"] == {"mean": 0.0, "ci": [0.0, 0.0]}
    with pytest.raises(EvalError, match="compare: task 1 differs"):
        compare_episodes(A, [A[0], A[2], A[1], A[3]], (1,))


def test_compare_mode_writes_both_sides_and_the_report_shows_the_differences(tmp_path):
    results = write_episode_evaluation(tmp_path, A, (1, 4), SETTINGS, compare_with=B)
    assert results["compare"]["model"]["success_at_1"]["mean"] == pytest.approx((1 + 1 + 4 + 0) / 16)
    assert len((tmp_path / "episodes_compare.jsonl").read_text().splitlines()) == 16
    page = (tmp_path / "report.html").read_text()
    assert "<th>A: a</th><th>B: b</th>" in page and "Compare (B - A, paired 95% CI over tasks" in page
    assert "tasks solved 1, lost 1, better 2, worse 1, same 1" in page
    assert "Episodes of A: a" in page and "Episodes of B: b" in page
    write_episode_evaluation(tmp_path, A, (1,), {"env": "guess_number"})  # no compare now: its files go
    assert not (tmp_path / "episodes_compare.jsonl").exists()


def test_a_task_episodes_read_back_from_the_progress_file_equal_the_played_ones():
    for t in A:
        assert TASK_CODEC.from_dict(json.loads(json.dumps(TASK_CODEC.to_dict(t)))) == t
