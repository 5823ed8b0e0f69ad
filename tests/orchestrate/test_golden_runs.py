"""Golden runs (scripts/golden_runs.py): every recipe's first 3 seeded steps, and the resume of a
run folder written by an older commit, equal what was recorded. A difference names the recipe
and the first key; if the change was meant, re-record with `python scripts/golden_runs.py record`
and say why in the commit."""

from __future__ import annotations

import importlib.util

import pytest

from tests.script_loader import load_script

golden_runs = load_script("golden_runs")
golden_resume = load_script("golden_resume")


@pytest.mark.parametrize("name", golden_runs.recorded_recipes())
def test_golden_run_is_unchanged(name):
    problem = golden_runs.check_recipe(name)
    assert problem is None, problem


def test_every_recipe_has_a_golden_run():
    recipes = {p.stem for p in golden_runs.RECIPES.glob("*.toml")}
    assert recipes <= set(golden_runs.recorded_recipes())  # a new recipe: record its golden run


def test_a_run_folder_from_the_recording_commit_resumes_to_the_uninterrupted_run():
    problem = golden_resume.check_resume()
    assert problem is None, problem


def test_the_comparison_names_the_first_differing_key():
    diff = golden_runs.first_difference
    row = {"step": 1, "loss/policy": 0.5, "reward/mean": 0.25, "eval/accuracy": None}
    assert diff([row], [{**row, "loss/policy": 0.5 * (1 + 1e-6)}]) is None  # within rel 1e-5
    assert diff([{"x": 0.0}], [{"x": 5e-8}]) is None  # within abs 1e-7
    assert diff([row], [{**row, "loss/policy": 0.5001}]) == "[0]['loss/policy']: recorded 0.5, now 0.5001"
    assert diff([row], [{**row, "eval/accuracy": 0.0}]) == "[0]['eval/accuracy']: recorded None, now 0.0"
    missing = {k: v for k, v in row.items() if k != "reward/mean"}
    assert diff([row], [missing]) == "[0]['reward/mean']: recorded 0.25, now missing"
    assert diff([row], [row, row]) == ": recorded 1 entries, now 2"
    assert diff({"s": ["a"]}, {"s": ["b"]}) == "['s'][0]: recorded 'a', now 'b'"
    assert diff([True], [1]) == "[0]: recorded True, now 1"


def test_wall_clock_keys_are_dropped_and_the_rest_kept():
    rows = [{"step": 1, "time/step_s": 0.1, "throughput/tokens_per_s": 9.0, "time/elapsed_s": 1.0,
             "async/staleness": 0.0, "reward/mean": 0.5}]
    assert golden_runs.kept_metrics(rows) == [{"step": 1, "async/staleness": 0.0, "reward/mean": 0.5}]


def test_a_recipe_this_machine_cannot_run_is_skipped_with_its_reason():
    import torch

    from rlvr.config import load_config

    grpo = golden_runs.RECIPES / "grpo.toml"
    vllm = golden_runs.missing_requirement(load_config(grpo, ["model.engine=vllm"]))
    gpu = golden_runs.missing_requirement(load_config(grpo, ["model.device=cuda"]))
    assert (vllm is None) == (importlib.util.find_spec("vllm") is not None)
    assert (gpu is None) == torch.cuda.is_available()
    assert vllm is None or "`vllm` package" in vllm
    assert gpu is None or "needs a GPU" in gpu
    assert golden_runs.missing_requirement(load_config(grpo)) is None
