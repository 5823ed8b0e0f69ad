"""Evaluation on episodes (rlvr.evaluate.episodes_eval): hand-computed small cases of the
success rule, pass@k over episodes against the closed form, the histogram, the disagreeing
tasks, and the metric keys' definitions in docs/metrics.md."""

from __future__ import annotations

import json
import re
from math import comb
from pathlib import Path

import pytest

from rlvr.evaluate.episodes_eval import (EpisodeOutcome, TaskEpisodes, disagreeing_tasks, greedy_metrics,
                                         sampled_metrics, success_histogram, summarize_episodes)
from rlvr.evaluate.episodes_write import write_episode_evaluation

REPO = Path(__file__).resolve().parents[2]
WIN = EpisodeOutcome(reward=1.0, env_ended=True, turns=2, tool_calls=1, stop_reason="solved")
LOSS = EpisodeOutcome(reward=0.0, env_ended=False, turns=4, tool_calls=0, stop_reason="max_turns")


def task(name: str, wins: int, k: int = 4) -> TaskEpisodes:
    return TaskEpisodes(f"prompt {name}", name, f"t/{name}", (WIN,) * wins + (LOSS,) * (k - wins))


# Four tasks of k = 4 episodes with c = 0, 1, 2, 4 successes.
TASKS = [task("a", 0), task("b", 1), task("c", 2), task("d", 4)]


def test_success_is_the_environment_ending_the_episode_with_a_reward_at_the_threshold():
    assert WIN.success() and not LOSS.success()
    # A reward of 1 at a runner limit (a step reward, then max_turns) is not a success.
    assert not EpisodeOutcome(1.0, env_ended=False, turns=4, tool_calls=0, stop_reason="max_turns").success()
    half = EpisodeOutcome(0.5, env_ended=True, turns=1, tool_calls=0, stop_reason="answered")
    assert not half.success() and half.success(threshold=0.5)


def test_pass_at_k_over_episodes_is_the_closed_form_mean_over_tasks():
    # pass@2 = 1 - C(4 - c, 2) / C(4, 2): c = 0 -> 0, 1 -> 1 - 3/6 = 1/2, 2 -> 1 - 1/6 = 5/6, 4 -> 1;
    # mean (0 + 1/2 + 5/6 + 1) / 4 = 7/12. success@1 = (0 + 1/4 + 2/4 + 4/4) / 4 = 7/16.
    s = summarize_episodes(TASKS, (1, 2, 4))
    assert s["pass_at_k"]["2"]["mean"] == pytest.approx(7 / 12)
    assert s["success_at_1"]["mean"] == pytest.approx(7 / 16) == s["pass_at_k"]["1"]["mean"]
    assert s["pass_at_k"]["4"]["mean"] == pytest.approx(3 / 4)  # any of 4: tasks b, c, d
    closed = sum(1 - comb(4 - c, 3) / comb(4, 3) for c in (0, 1, 2, 4)) / 4  # k = 3 straight from eq. 1
    assert sampled_metrics(TASKS, (3,))["eval/pass@3"] == pytest.approx(closed)
    low, high = s["pass_at_k"]["2"]["ci"]
    assert 0.0 <= low <= 7 / 12 <= high <= 1.0


def test_histogram_counts_tasks_by_successes_out_of_k_with_zeros():
    assert success_histogram(TASKS) == {0: 1, 1: 1, 2: 1, 3: 0, 4: 1}
    assert summarize_episodes(TASKS, (1,))["histogram"] == {"0": 1, "1": 1, "2": 1, "3": 0, "4": 1}


def test_disagreeing_tasks_are_the_mixed_ones_most_balanced_first():
    rows = disagreeing_tasks(TASKS)
    # b (1 of 4, entropy 0.811 bits) and c (2 of 4, entropy 1 bit); c ranks first.
    assert [(r["rank"], r["source"], r["successes"]) for r in rows] == [(1, "t/c", 2), (2, "t/b", 1)]
    assert rows[0]["verdict_entropy"] == pytest.approx(1.0)
    assert [e["success"] for e in rows[1]["episodes"]] == [True, False, False, False]
    assert summarize_episodes(TASKS, (1,))["disagreements"] == 2
    assert sampled_metrics(TASKS, (1,))["eval/disagree_frac"] == pytest.approx(2 / 4)


def test_turns_tool_calls_and_stop_reasons_are_means_over_episodes():
    # 7 wins (2 turns, 1 call) and 9 losses (4 turns, 0 calls) of 16 episodes.
    s = summarize_episodes(TASKS, (1,))
    assert s["turns_mean"] == pytest.approx((7 * 2 + 9 * 4) / 16)
    assert s["tool_calls_mean"] == pytest.approx(7 / 16)
    assert s["stop_reasons"] == {"max_turns": pytest.approx(9 / 16), "solved": pytest.approx(7 / 16)}


def test_greedy_metrics_are_one_episode_per_task():
    greedy = [task("a", 1, k=1), task("b", 0, k=1), task("c", 0, k=1)]
    m = greedy_metrics(greedy)
    assert m["eval/accuracy"] == pytest.approx(1 / 3)
    assert m["eval/env/turns_mean"] == pytest.approx((2 + 4 + 4) / 3)
    assert m["eval/env/stop/max_turns"] == pytest.approx(2 / 3) and m["eval/env/env_errors"] == 0.0


def test_uneven_episodes_or_k_above_them_are_refused():
    with pytest.raises(ValueError, match="same number"):
        summarize_episodes([task("a", 1, k=2), task("b", 1, k=3)], (1,))
    with pytest.raises(ValueError, match="1 <= k <= 4"):
        summarize_episodes(TASKS, (8,))


def test_the_output_folder_holds_results_disagreements_and_every_episode(tmp_path):
    (tmp_path / "report.html").write_text("an older single-turn report")
    results = write_episode_evaluation(tmp_path, TASKS, (1, 4), {"env": "guess_number"})
    assert json.loads((tmp_path / "results.json").read_text()) == results
    episodes = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert len(episodes) == 16 and sum(e["success"] for e in episodes) == 7
    assert len((tmp_path / "disagreements.jsonl").read_text().splitlines()) == 2
    assert "an older single-turn report" not in (tmp_path / "report.html").read_text()  # it is this one's now


def test_every_in_training_eval_key_is_defined_in_metrics_md():
    page = (REPO / "docs" / "metrics.md").read_text()
    documented = set(re.findall(r"`(eval/[^`]+)`", page))
    keys = {*greedy_metrics([task("a", 1, k=1)]), *sampled_metrics(TASKS, (1, 2))}
    generic = {re.sub(r"@\d+$", "@k", re.sub(r"/stop/.+$", "/stop/<reason>", k)) for k in keys}
    assert generic - documented == set()
