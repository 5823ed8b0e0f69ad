"""Evaluation on repository episodes: resolved@1 / pass@k, per-test pass rates, similarity,
tampering flags in results.json, and each episode's diff in report.html."""

from __future__ import annotations

import json

import pytest

from rlvr.engines.base import SamplingParams
from rlvr.envs import EpisodeLimits, PlainRenderer
from rlvr.envs.repo.env import RepoSettings, repo_env, task_samples
from rlvr.evaluate.episodes_eval import write_episode_evaluation
from rlvr.orchestrate.episode_eval import EpisodeEvaluator

pytestmark = pytest.mark.sandbox


def call(name, **arguments):
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


FIX = call("edit", path="calc/ops.py", search="a - b", replace="a + b") + call("submit")
TAMPER = call("edit", path="tests/test_ops.py", search="from calc.ops import add, neg",
              replace="from calc.ops import neg\nadd = lambda a, b: a + b") + call("submit")


def test_resolved_rate_test_rates_similarity_flags_and_the_diff_in_the_report(scripted, char_tok, calc_task,
                                                                             sandbox, tmp_path):
    # k = 4 episodes of one task: fix, tamper, fix, tamper -> c = 2 resolved of 4.
    queue = iter([FIX, TAMPER, FIX, TAMPER])
    make = repo_env([calc_task], sandbox, RepoSettings(max_turns=3))
    evaluator = EpisodeEvaluator(make, PlainRenderer(char_tok), EpisodeLimits(max_turns=3, max_total_tokens=4000),
                                 workers=1)
    played = evaluator.play(scripted(lambda text: next(queue)), task_samples([calc_task]), 4,
                            SamplingParams(max_new_tokens=400), seed=0)
    results = write_episode_evaluation(tmp_path, played, (1, 2, 4), {"env": "repo"})
    repo = results["model"]["repo"]
    assert repo["resolved_at_1"]["mean"] == pytest.approx(0.5)
    assert repo["resolved_pass_at_k"]["2"]["mean"] == pytest.approx(1 - 1 / 6)  # 1 - C(2,2)/C(4,2)
    assert repo["test_pass_rate"] == {"tests/test_ops.py::test_add": 0.5, "tests/test_ops.py::test_neg": 1.0}
    assert repo["tampering"] == {"edits_tests": 0.5} and repo["tampered_episodes"] == 0.5
    assert repo["similarity_mean"] == pytest.approx((1.0 + 0.0 + 1.0 + 0.0) / 4)
    assert results["model"]["stop_reasons"] == {"submitted": 1.0} and results["model"]["tool_calls_mean"] == 2.0
    page = (tmp_path / "report.html").read_text()
    assert "resolved@1" in page and "diff against the base" in page
    assert "-    return a - b\n+    return a + b" in page  # the fix's diff, html-escaped text
