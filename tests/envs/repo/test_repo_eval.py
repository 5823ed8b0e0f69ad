"""Evaluation on repository episodes: resolved@1 / pass@k, per-test pass rates, similarity,
tampering flags in results.json, and each episode's diff in report.html."""

from __future__ import annotations

import json

import pytest

from rlvr.engines.base import SamplingParams
from rlvr.envs import EpisodeLimits, PlainRenderer
from rlvr.envs.repo.env import RepoSettings, repo_env, task_samples
from rlvr.evaluate.episodes_write import write_episode_evaluation
from rlvr.orchestrate.episode_eval import EpisodeEvaluator

pytestmark = pytest.mark.sandbox


def call(name, **arguments):
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


RECIPE = '''\
# Coding in a repository (docs/env-repo.md): fix a bug with file, edit and run tools in the
# sandbox; hidden tests on a pristine copy score the diff, a gated patch comparator shapes it.
# The tasks are the shipped generated bug fixes (train: 9 modules; test: 3 held-out modules).
# A copy of models/tiny-tool with a longer context stands in: it plays badly, the path runs.
[run]
name = "env_repo"
seed = 0

[model]
path = "MODEL"

[task]
kind = "repo"
test_size = 2

[reward]
verifier = "exact"   # unused: the environment's hidden tests score each episode

[env]
kind = "repo"
max_turns = 4
max_total_tokens = 3000
max_tool_calls = 8
similarity_weight = 0.1
sandbox_workers = 2

[sampling]
group_size = 4
prompts_per_step = 4
temperature = 1.0
max_new_tokens = 200

[train]
steps = 10
lr = 1e-5
micro_batch_size = 8

[eval]
size = 0
max_new_tokens = 200
'''

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
    assert repo["test_pass_rate"] == {"calc-1 tests/test_ops.py::test_add": 0.5, "calc-1 tests/test_ops.py::test_neg": 1.0}
    assert repo["tampering"] == {"edits_tests": 0.5} and repo["tampered_episodes"] == 0.5
    assert repo["similarity_mean"] == pytest.approx((1.0 + 0.0 + 1.0 + 0.0) / 4)
    assert results["model"]["stop_reasons"] == {"submitted": 1.0} and results["model"]["tool_calls_mean"] == 2.0
    page = (tmp_path / "report.html").read_text()
    assert "resolved@1" in page and "diff against the base" in page
    assert "-    return a - b\n+    return a + b" in page  # the fix's diff, html-escaped text


@pytest.mark.slow  # loads a model and plays 4 episodes through the CLI (~1 min under load)
def test_rlvr_eval_on_repo_tasks_writes_the_repo_summary(tmp_path):
    import shutil
    from pathlib import Path

    from rlvr.cli.main import main

    root = Path(__file__).resolve().parents[3]
    model = tmp_path / "model"
    shutil.copytree(root / "models" / "tiny-tool", model)
    config = json.loads((model / "config.json").read_text())
    (model / "config.json").write_text(json.dumps({**config, "max_position_embeddings": 4096}))
    (tmp_path / "recipe.toml").write_text(RECIPE.replace("MODEL", str(model)))
    out = tmp_path / "eval"
    assert main(["eval", str(model), "--recipe", str(tmp_path / "recipe.toml"), "--n", "2", "--temperature", "1.0",
                 "--max-new-tokens", "100", "--out", str(out)]) == 0
    results = json.loads((out / "results.json").read_text())["model"]
    assert results["tasks"] == 2 and "resolved_at_1" in results["repo"] and results["repo"]["test_pass_rate"]
    assert "diff against the base" in (out / "report.html").read_text()
