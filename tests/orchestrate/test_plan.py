"""The run plan resolves every choice of a recipe without loading anything."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rlvr.algo import Objective
from rlvr.config import load_config
from rlvr.orchestrate.batch_builder import ADVANTAGES
from rlvr.orchestrate.components import build_objective
from rlvr.orchestrate.engine_choice import ENGINE_BUILDERS
from rlvr.orchestrate.plan import OBJECTIVE_KEYS, plan_run
from rlvr.orchestrate.producers import PRODUCERS, AsyncProducer, SyncProducer
from rlvr.orchestrate.source_choice import SOURCES
from rlvr.tasks.registry import TASKS

REPO = Path(__file__).resolve().parents[2]
RECIPES = sorted((REPO / "recipes").glob("*.toml"))


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda p: p.stem)
def test_every_recipe_plans_without_its_model_or_data(recipe):
    """A model folder that does not exist is not opened: planning loads nothing."""
    config = load_config(recipe, ["model.path=/nonexistent/model", "run.output_dir=/nonexistent/runs"])
    plan = plan_run(config)
    assert plan.task in TASKS and plan.engine in ENGINE_BUILDERS and plan.source in SOURCES
    assert plan.batch.advantage.kind == config.algo.advantage in ADVANTAGES
    assert plan.needs_critic == (config.algo.advantage == "gae")
    assert plan.needs_reference == (config.algo.kl != "none")
    assert len(plan.describe()) == 5 and not Path("/nonexistent").exists()


def test_the_producer_follows_orchestrate_mode():
    grpo = REPO / "recipes" / "grpo.toml"
    assert PRODUCERS[plan_run(load_config(grpo)).producer] is SyncProducer
    assert PRODUCERS[plan_run(load_config(grpo, ["orchestrate.mode=async", "orchestrate.max_staleness=1"])).producer] \
        is AsyncProducer


def test_the_objective_takes_exactly_the_surrogates_declared_arguments():
    dual = plan_run(load_config(REPO / "recipes" / "grpo.toml", ["algo.surrogate=dual_clip", "algo.dual_clip.clip_c=3.0"]))
    assert dict(dual.objective["surrogate_args"]) == {"eps_low": 0.2, "eps_high": 0.2, "clip_c": 3.0}
    sapo = plan_run(load_config(REPO / "recipes" / "sapo.toml"))
    assert set(sapo.objective["surrogate_args"]) == {"tau_pos", "tau_neg"}
    assert build_objective(sapo).surrogate_args == sapo.objective["surrogate_args"]


def test_the_plans_objective_arguments_are_exactly_the_objectives_fields():
    """`objective_args` reads [algo] by Objective's field names: a field missing from
    OBJECTIVE_KEYS would leave the loss at its default whatever the recipe says."""
    assert set(OBJECTIVE_KEYS) | {"surrogate_args", "aggregation_constant", "kl_cov_coef"} == \
        {f.name for f in dataclasses.fields(Objective)}
    plan = plan_run(load_config(REPO / "recipes" / "grpo.toml"))
    assert set(plan.objective) == {f.name for f in dataclasses.fields(Objective)}


def test_importing_the_plan_loads_no_torch():
    """The plan holds names and settings: importing it (and planning a recipe) loads neither
    torch nor transformers; the builders' tables are read where the parts are built."""
    code = ("import sys; import rlvr.orchestrate.plan as p; from rlvr.config import load_config; "
            f"p.plan_run(load_config({str(REPO / 'recipes' / 'grpo.toml')!r})).describe(); "
            "heavy = sorted(m for m in ('torch', 'transformers', 'rlvr.algo', 'rlvr.engines') if m in sys.modules); "
            "print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_dr_grpo_c_follows_the_generation_budget_unless_set():
    """The recipe leaves C unset: it is sampling.max_new_tokens, raised with it; a set C stays."""
    from rlvr.orchestrate.plan import objective_args

    recipe = REPO / "recipes" / "dr_grpo.toml"
    assert objective_args(load_config(recipe, []))["aggregation_constant"] == 8.0
    assert objective_args(load_config(recipe, ["sampling.max_new_tokens=256"]))["aggregation_constant"] == 256.0
    both = ["sampling.max_new_tokens=256", "algo.aggregation_constant=1.0"]  # LUSPO's C = 1
    assert objective_args(load_config(recipe, both))["aggregation_constant"] == 1.0
    assert objective_args(load_config(None, []))["aggregation_constant"] is None  # other aggregations: unused
