"""The run plan resolves every choice of a recipe without loading anything."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlvr.config import load_config
from rlvr.orchestrate.batch_builder import ADVANTAGES
from rlvr.orchestrate.plan import plan_run
from rlvr.orchestrate.producers import AsyncProducer, SyncProducer
from rlvr.tasks.registry import TASKS

REPO = Path(__file__).resolve().parents[2]
RECIPES = sorted((REPO / "recipes").glob("*.toml"))


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda p: p.stem)
def test_every_recipe_plans_without_its_model_or_data(recipe):
    """A model folder that does not exist is not opened: planning loads nothing."""
    config = load_config(recipe, ["model.path=/nonexistent/model", "run.output_dir=/nonexistent/runs"])
    plan = plan_run(config)
    assert plan.task is TASKS[config.task.kind]
    assert ADVANTAGES[plan.batch.advantage.kind] is ADVANTAGES[config.algo.advantage]
    assert plan.needs_critic == (config.algo.advantage == "gae")
    assert plan.needs_reference == (config.algo.kl != "none")
    assert len(plan.describe()) == 5 and not Path("/nonexistent").exists()


def test_the_producer_follows_orchestrate_mode():
    grpo = REPO / "recipes" / "grpo.toml"
    assert plan_run(load_config(grpo)).producer is SyncProducer
    assert plan_run(load_config(grpo, ["orchestrate.mode=async", "orchestrate.max_staleness=1"])).producer \
        is AsyncProducer


def test_the_objective_takes_exactly_the_surrogates_declared_arguments():
    dual = plan_run(load_config(REPO / "recipes" / "grpo.toml", ["algo.surrogate=dual_clip", "algo.clip_c=3.0"]))
    assert dict(dual.objective.surrogate_args) == {"eps_low": 0.2, "eps_high": 0.2, "clip_c": 3.0}
    sapo = plan_run(load_config(REPO / "recipes" / "sapo.toml"))
    assert set(sapo.objective.surrogate_args) == {"tau_pos", "tau_neg"}


def test_dr_grpo_c_follows_the_generation_budget_unless_set():
    """The recipe leaves C unset: it is sampling.max_new_tokens, raised with it; a set C stays."""
    from rlvr.orchestrate.plan import objective_from

    recipe = REPO / "recipes" / "dr_grpo.toml"
    assert objective_from(load_config(recipe, [])).aggregation_constant == 8.0
    assert objective_from(load_config(recipe, ["sampling.max_new_tokens=256"])).aggregation_constant == 256.0
    both = ["sampling.max_new_tokens=256", "algo.aggregation_constant=1.0"]  # LUSPO's C = 1
    assert objective_from(load_config(recipe, both)).aggregation_constant == 1.0
    assert objective_from(load_config(None, [])).aggregation_constant is None  # other aggregations: unused
