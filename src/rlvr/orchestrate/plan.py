"""The run plan: what a run will do, decided from the validated config before any weight,
tokenizer or dataset is loaded.

The config's cross-field rules ran when it was loaded (config/coherence*.py), so a plan is
made from a coherent config and holds names and settings only: the objective's arguments
(built into `rlvr.algo.Objective` with the parts), the batch chain's options (`BatchSpec`),
and the name of each part to build. The tables that turn those names into parts are read
where the parts are built: the task (`TASKS`, tasks/registry.py) and the engine
(`ENGINE_BUILDERS`, orchestrate/engine_choice.py) in `build` (orchestrate/components.py), the
producer (`PRODUCERS`, orchestrate/producers.py) and its source (`SOURCES`,
orchestrate/source_choice.py) in the loop. Importing this module loads no torch
(tests/orchestrate/test_plan.py). `rlvr train`, `rlvr eval`, `rlvr serve` and
`rlvr recipes show --explain` each make one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rlvr import names
from rlvr.config import Config
from rlvr.names import SURROGATE_PARAMS
from rlvr.orchestrate.batch_spec import BatchSpec

SINGLE_TURN_KINDS = names.SINGLE_TURN_KINDS  # evaluated single-turn (greedy accuracy, pass@k), not as episodes
# The fields of rlvr.algo.Objective that [algo] sets under the same name; `aggregation_constant`,
# `kl_cov_coef` and `surrogate_args` come from the chosen kinds' tables ([algo.<kind>],
# config/algo_section.py; the surrogate's per names.py's SURROGATE_PARAMS).
# tests/orchestrate/test_plan.py checks that these are exactly Objective's fields.
OBJECTIVE_KEYS = ("ratio_level", "surrogate", "aggregation", "kl", "kl_coef", "kl_placement", "kl_clamp",
                  "entropy_coef", "positive_lm_coef", "off_policy_delta", "entropy_control")
KL_COV_COEF = 1.0  # Objective's kl_cov_coef when entropy_control is not kl_cov (unread then)


@dataclass(frozen=True)
class RunPlan:
    config: Config
    objective: dict[str, Any]  # the loss, one choice per axis: rlvr.algo.Objective's keyword arguments
    batch: BatchSpec  # the batch chain's options
    task: str  # task.kind: how the task's splits load (TASKS)
    engine: str  # model.engine: which builder makes the rollout engine (ENGINE_BUILDERS)
    producer: str  # orchestrate.mode: where the loop's batches come from (PRODUCERS)
    source: str  # env.kind: what the producer draws them from (SOURCES)
    needs_reference: bool  # a KL term: the initial weights, or a teacher
    needs_critic: bool  # GAE advantages: a value model

    def describe(self) -> list[str]:
        """One line per resolved part, for `rlvr recipes show`."""
        c, o, adv = self.config, self.objective, self.batch.advantage
        return [f"objective: ratio {o['ratio_level']}, surrogate {o['surrogate']} {dict(o['surrogate_args'])}, "
                f"aggregation {o['aggregation']}, kl {o['kl']} in the {o['kl_placement']}",
                f"advantage: {adv.kind} (baseline {adv.baseline}, scale {adv.scale})",
                f"reward: {c.reward.function or c.reward.verifier}, template {c.reward.template}",
                f"task: {self.task}; engine: {self.engine} ({c.orchestrate.backend}); "
                f"producer: {self.producer}, from the env.kind {self.source!r} source",
                f"models: policy{', reference' if self.needs_reference else ''}"
                f"{', critic' if self.needs_critic else ''}"]


def objective_args(config: Config) -> dict[str, Any]:
    """The recipe's objective as `Objective`'s keyword arguments; its surrogate's arguments are
    the ones names.py declares."""
    a = config.algo
    own = a.options("surrogate")  # the surrogate's table; eps_low / eps_high are [algo]'s own
    surrogate_args = {p: getattr(own if own is not None and p in type(own).model_fields else a, p)
                      for p in SURROGATE_PARAMS[a.surrogate]}
    kl_cov = a.options("entropy_control") if a.entropy_control == "kl_cov" else None
    return {**{key: getattr(a, key) for key in OBJECTIVE_KEYS}, "surrogate_args": surrogate_args,
            "aggregation_constant": aggregation_constant(config),
            "kl_cov_coef": KL_COV_COEF if kl_cov is None else kl_cov.coef}


def aggregation_constant(config: Config) -> float | None:
    """Dr. GRPO's C: `algo.seq_mean_token_sum_norm.constant`, else (single-turn `seq_mean_token_sum_norm`) the
    generation budget `sampling.max_new_tokens`, so that raising the budget raises C with it."""
    a = config.algo
    if a.aggregation != "seq_mean_token_sum_norm":
        return None
    constant = a.seq_mean_token_sum_norm.constant
    return float(config.sampling.max_new_tokens) if constant is None else constant


def plan_run(config: Config) -> RunPlan:
    """The plan of a loaded (so coherent) config; nothing is loaded or built."""
    return RunPlan(config=config, objective=objective_args(config), batch=BatchSpec.from_config(config),
                   task=config.task.kind, engine=config.model.engine, producer=config.orchestrate.mode,
                   source=config.env.kind, needs_reference=config.algo.kl != "none",  # as Objective.needs_ref
                   needs_critic=config.algo.advantage == "gae")
