"""The run plan: what a run will do, decided from the validated config before any weight,
tokenizer or dataset is loaded.

The config's cross-field rules ran when it was loaded (config/coherence*.py), so a plan is
made from a coherent config and only resolves names to parts, each through its one table:
the objective's axes (algo/), the batch chain and its advantage (`ADVANTAGES`), the task
(`TASKS`), the engine (`ENGINE_BUILDERS`), the producer (`PRODUCERS`) and the source it draws
from (`SOURCES`, by env.kind: single-turn rollouts, the same as one-turn episodes for
"single_turn", or an environment's episodes). `rlvr train`
and `rlvr recipes show --explain` make one; `rlvr eval` reads the same task table but builds
no plan (it trains nothing).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rlvr.algo import Objective
from rlvr.config import Config
from rlvr import names
from rlvr.names import SURROGATE_PARAM_KEYS, SURROGATE_PARAMS
from rlvr.orchestrate.batch_builder import ADVANTAGES, BatchSpec
from rlvr.orchestrate.engine_choice import ENGINE_BUILDERS, Builder
from rlvr.orchestrate.episode_source import EpisodeSource
from rlvr.orchestrate.one_turn_source import OneTurnSource
from rlvr.orchestrate.producers import PRODUCERS, Producer
from rlvr.orchestrate.rollouts import RolloutSource, Source
from rlvr.tasks.registry import TASKS, TaskKind

SourceBuilder = Callable[..., Source]  # (config, parts, watchdog) -> the producer's source
SOURCES: dict[str, SourceBuilder] = names.ENV_KIND.bind({
    "none": RolloutSource, "guess_number": EpisodeSource.from_run, "python_tool": EpisodeSource.from_run,
    "sql": EpisodeSource.from_run, "single_turn": OneTurnSource, "textarena": EpisodeSource.from_run,
    "custom": EpisodeSource.from_run, "world": EpisodeSource.from_run,
}, table="SOURCES")
SINGLE_TURN_KINDS = names.SINGLE_TURN_KINDS  # evaluated single-turn (greedy accuracy, pass@k), not as episodes


@dataclass(frozen=True)
class RunPlan:
    config: Config
    objective: Objective  # the loss: one choice per axis
    batch: BatchSpec  # the batch chain's options
    task: TaskKind  # how the task's splits load
    engine: Builder  # builds the rollout engine
    producer: type[Producer]  # where the loop's batches come from
    source: SourceBuilder  # what the producer draws them from
    needs_reference: bool  # a KL term: the initial weights, or a teacher
    needs_critic: bool  # GAE advantages: a value model

    def describe(self) -> list[str]:
        """One line per resolved part, for `rlvr recipes show`."""
        c, o = self.config, self.objective
        return [f"objective: ratio {o.ratio_level}, surrogate {o.surrogate} {dict(o.surrogate_args)}, "
                f"aggregation {o.aggregation}, kl {o.kl} in the {o.kl_placement}",
                f"advantage: {self.batch.advantage.kind} ({ADVANTAGES[self.batch.advantage.kind].__name__})",
                f"reward: {c.reward.function or c.reward.verifier}, template {c.reward.template}",
                f"task: {c.task.kind}; engine: {c.model.engine} ({c.orchestrate.backend}); "
                f"producer: {self.producer.__name__} from {_source_name(self.source)} (env: {c.env.kind})",
                f"models: policy{', reference' if self.needs_reference else ''}"
                f"{', critic' if self.needs_critic else ''}"]


def _source_name(source: SourceBuilder) -> str:
    return getattr(source, "__qualname__", type(source).__name__).split(".")[0]


def objective_from(config: Config) -> Objective:
    """The recipe's objective; its surrogate's arguments are the ones names.py declares."""
    a = config.algo
    args = {p: getattr(a, SURROGATE_PARAM_KEYS[p]) for p in SURROGATE_PARAMS[a.surrogate]}
    return Objective(ratio_level=a.ratio_level, surrogate=a.surrogate, surrogate_args=args,
                     aggregation=a.aggregation, aggregation_constant=a.aggregation_constant,
                     kl=a.kl, kl_coef=a.kl_coef, kl_placement=a.kl_placement, kl_clamp=a.kl_clamp,
                     entropy_coef=a.entropy_coef, positive_lm_coef=a.positive_lm_coef,
                     off_policy_delta=a.off_policy_delta, entropy_control=a.entropy_control,
                     kl_cov_coef=a.kl_cov_coef)


def plan_run(config: Config) -> RunPlan:
    """The plan of a loaded (so coherent) config; nothing is loaded or built."""
    objective = objective_from(config)
    return RunPlan(config=config, objective=objective, batch=BatchSpec.from_config(config),
                   task=TASKS[config.task.kind], engine=ENGINE_BUILDERS[config.model.engine],
                   producer=PRODUCERS[config.orchestrate.mode], source=SOURCES[config.env.kind],
                   needs_reference=objective.needs_ref,
                   needs_critic=config.algo.advantage == "gae")
