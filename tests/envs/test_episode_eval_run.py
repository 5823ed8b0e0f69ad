"""Evaluation on episodes in a training run (recipes/env_guess_number.toml on models/tiny-env,
eval.size > 0) and through `rlvr eval` on the environment recipe: the eval keys of the metrics
line, training untouched by the evaluation, and the command's figures equal to the run's."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from rlvr.cli.main import main
from rlvr.config import load_config
from rlvr.orchestrate import train

REPO = Path(__file__).resolve().parents[2]
SMALL = ["sampling.prompts_per_step=2", "sampling.group_size=4", "log.progress=none", "checkpoint.every_minutes=0",
         "train.steps=2"]
EVAL = ["eval.size=3", "eval.every=1", "eval.samples=4", "eval.k=[1,4]", 'eval.keep_best="eval/success_rate"']


def run(tmp_path, name: str, *extra: str) -> list[dict]:
    config = load_config(REPO / "recipes" / "env_guess_number.toml",
                         [f"run.output_dir={tmp_path}", f"run.name={name}", *SMALL, *extra])
    return train(config).folder.read_metrics()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("env_eval")
    return tmp, run(tmp, "with_eval", *EVAL), run(tmp, "without_eval", "eval.size=0")


def test_an_environment_run_evaluates_on_episodes_at_eval_every(runs):
    _, rows, _ = runs
    assert [r["step"] for r in rows] == [1, 2]
    for row in rows:
        for key in ("eval/accuracy", "eval/env/turns_mean", "eval/env/tool_calls_mean", "eval/env/env_errors",
                    "eval/success_rate", "eval/pass@1", "eval/pass@4", "eval/disagree_frac"):
            assert key in row, key
        # pass@1 over n episodes is c / n, the mean success; any of 4 is at least one of 1.
        assert row["eval/pass@1"] == pytest.approx(row["eval/success_rate"])
        assert row["eval/pass@1"] <= row["eval/pass@4"] <= 1.0
        assert 1.0 <= row["eval/env/turns_mean"] <= 5.0  # env.max_turns = 5
        stops = {k: v for k, v in row.items() if k.startswith("eval/env/stop/")}
        assert set(stops) <= {"eval/env/stop/solved", "eval/env/stop/max_turns", "eval/env/stop/max_tokens"}
        assert sum(stops.values()) == pytest.approx(1.0)


def test_the_evaluation_leaves_training_as_it_would_have_been(runs):
    """The sampled pass puts the engine's random stream back: step 2 trains on the same games."""
    _, with_eval, without = runs
    for key in ("reward/mean", "loss/policy", "env/turns_mean", "response/length_mean"):
        assert with_eval[1][key] == without[1][key], key
    assert not any(k.startswith("eval/") for k in without[1])


def test_keep_best_keeps_the_checkpoint_of_the_best_sampled_success_rate(runs):
    from rlvr.train.checkpoint import list_checkpoints, read_state

    folder, rows, _ = runs
    kept = list_checkpoints(folder / "with_eval" / "best_checkpoint")
    assert len(kept) == 1
    state = read_state(kept[0])
    best = max(rows, key=lambda r: r["eval/success_rate"])  # the first of equals: a tie keeps the older one
    assert state["metric"] == "eval/success_rate" and state["value"] == best["eval/success_rate"]
    assert kept[0].name == f"step_{best['step']}"


def test_rlvr_eval_on_the_run_checkpoint_gives_the_run_figures(runs, tmp_path, capsys):
    """Greedy `rlvr eval` of the last checkpoint (defaults from the run's config.toml, its [env])
    plays the same 3 games with the same seeds as the run's evaluation after step 2."""
    folder, rows, _ = runs
    checkpoint = folder / "with_eval" / "checkpoints" / "step_2"
    assert main(["eval", str(checkpoint), "--temperature", "0", "--limit", "3", "--out", str(tmp_path)]) == 0
    results = json.loads((tmp_path / "results.json").read_text())
    m = results["model"]
    assert results["settings"]["env"] == "guess_number" and m["episodes_per_task"] == 1  # greedy: one a task
    assert m["success_at_1"]["mean"] == pytest.approx(rows[1]["eval/accuracy"])
    assert m["turns_mean"] == pytest.approx(rows[1]["eval/env/turns_mean"])
    assert "success@1" in capsys.readouterr().out


def test_rlvr_eval_on_the_env_recipe_writes_histogram_disagreements_and_episodes(tmp_path, capsys):
    out = tmp_path / "ev"
    argv = ["eval", str(REPO / "models" / "tiny-env"), "--recipe", "env_guess_number", "--n", "4", "--k", "1,4",
            "--limit", "5", "--out", str(out)]
    assert main(argv) == 0
    m = json.loads((out / "results.json").read_text())["model"]
    episodes = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(episodes) == 20 and m["tasks"] == 5
    wins = Counter(e["source"] for e in episodes if e["success"])
    per_task = [wins.get(src, 0) for src in dict.fromkeys(e["source"] for e in episodes)]
    assert m["histogram"] == {str(c): per_task.count(c) for c in range(5)}
    assert all(e["success"] == (e["stop_reason"] == "solved") for e in episodes)  # guess_number: solved is reward 1
    mixed = [json.loads(line) for line in (out / "disagreements.jsonl").read_text().splitlines()]
    assert len(mixed) == m["disagreements"] == sum(0 < c < 4 for c in per_task)
    printed = capsys.readouterr().out
    assert "pass@4" in printed and "successes out of 4" in printed


def test_single_turn_options_on_an_env_recipe_are_refused_in_one_line(tmp_path, capsys):
    model = str(REPO / "models" / "tiny-env")
    assert main(["eval", model, "--recipe", "env_guess_number", "--prompt-field", "q", "--out", str(tmp_path)]) == 2
    assert "--prompt-field is for single-turn evaluation" in capsys.readouterr().err
    assert main(["eval", model, "--recipe", "env_guess_number", "--compare", str(tmp_path / "none"),
                 "--out", str(tmp_path)]) == 2
    assert "--compare " + str(tmp_path / "none") + ": model folder not found" in capsys.readouterr().err
    assert main(["eval", model, "--recipe", "env_guess_number", "--temperature", "0", "--k", "1,2",
                 "--out", str(tmp_path)]) == 2
    assert "temperature 0 is greedy: one episode a task" in capsys.readouterr().err


def test_the_python_api_evaluates_an_env_recipe_on_episodes(tmp_path):
    import rlvr

    output = rlvr.eval_model(REPO / "models" / "tiny-env", recipe="env_guess_number", n=2, k=[1, 2], limit=2,
                             out=tmp_path)
    m = output.results["model"]
    assert m["tasks"] == 2 and m["episodes_per_task"] == 2 and set(m["pass_at_k"]) == {"1", "2"}


def test_compare_plays_both_models_on_the_same_games_as_their_own_evaluations(runs, tmp_path, capsys):
    """`rlvr eval A --compare B` on the env recipe: B's side equals `rlvr eval B` alone (same
    tasks, episode seeds and engine seed), and the paired differences are B's minus A's."""
    folder = runs[0]
    a, b = str(REPO / "models" / "tiny-env"), str(folder / "with_eval" / "checkpoints" / "step_2")
    common = ["--recipe", "env_guess_number", "--n", "2", "--k", "1,2", "--limit", "4"]
    assert main(["eval", a, "--compare", b, *common, "--out", str(tmp_path / "ab")]) == 0
    assert main(["eval", b, *common, "--out", str(tmp_path / "b")]) == 0
    assert main(["eval", a, *common, "--out", str(tmp_path / "a")]) == 0
    both, alone_a, alone_b = (json.loads((tmp_path / d / "results.json").read_text()) for d in ("ab", "a", "b"))
    assert both["model"] == alone_a["model"] and both["compare"]["model"] == alone_b["model"]
    episodes = lambda d, name: [json.loads(x) for x in (tmp_path / d / name).read_text().splitlines()]  # noqa: E731
    assert episodes("ab", "episodes_compare.jsonl") == episodes("b", "episodes.jsonl")
    per_task = both["compare"]["diff"]["per_task"]
    rate = lambda r: [t["successes"] / 2 for t in r["model"]["per_task"]]  # noqa: E731
    assert [t["success_diff"] for t in per_task] == pytest.approx(
        [y - x for x, y in zip(rate(alone_a), rate(alone_b))])
    assert both["compare"]["diff"]["success_at_1_diff"]["mean"] == pytest.approx(
        alone_b["model"]["success_at_1"]["mean"] - alone_a["model"]["success_at_1"]["mean"])
    assert "diff success@1" in capsys.readouterr().out
    assert "Compare (B - A" in (tmp_path / "ab" / "report.html").read_text()
