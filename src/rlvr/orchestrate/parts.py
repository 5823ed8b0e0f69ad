"""What a plan builds: `Parts` for a training run (orchestrate/components.py `build`), and the
`ModelParts` it extends for a model that only generates (`rlvr eval`, `rlvr serve`). The loop,
the learner, the sources and the environments take them typed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the types only: this module is read by every part, and loads none of them
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

    from rlvr.algo import Objective
    from rlvr.engines import Engine, SamplingParams
    from rlvr.orchestrate.scoring import RewardFn
    from rlvr.train import Trainer
    from rlvr.train.critic import CriticTrainer
    from rlvr.types import Sample


@dataclass
class ModelParts:
    """A model ready to generate and be scored: what `rlvr eval` and `rlvr serve` build from a
    plan (orchestrate/model_parts.py), and what an environment is built from
    (orchestrate/env_choice.py reads `reward_fn`, the episodes `tokenizer`)."""

    model: PreTrainedModel  # the policy (training: the weights the trainer updates)
    tokenizer: PreTrainedTokenizerBase  # with the recipe's chat template
    engine: Engine  # the recipe's model.engine; its own weights unless a sync run's (engine_choice.needs_copy)
    reward_fn: RewardFn | None  # the recipe's [reward]; None where the command scores by its own rule


@dataclass
class Parts(ModelParts):
    """Everything a training run's plan needs, loaded."""

    trainer: Trainer = None  # type: ignore[assignment]  # always given: a default only for field order
    train_set: list[Sample] = field(default_factory=list)
    test_set: list[Sample] = field(default_factory=list)
    sampling: SamplingParams = None  # type: ignore[assignment]  # the [sampling] section, as the engine reads it
    ref_model: PreTrainedModel | None = None  # the KL target (plan.needs_reference), else None
    objective: Objective | None = None  # the trainer's loss (built from plan.objective)
    critic: CriticTrainer | None = None  # the value model (plan.needs_critic), else None


Components = Parts  # the name before issue 28
