"""Build the parts of a run from its plan: model, engine, task, reward, trainer (`Parts`).

`Components` and `resolve_path` stay importable from here (their homes: orchestrate/parts.py,
orchestrate/paths.py)."""

from __future__ import annotations

from pathlib import Path

import torch
from transformers import PreTrainedModel

from rlvr.algo import Objective
from rlvr.config import Config
from rlvr.config.schema import RewardSection
from rlvr.engines import SamplingParams
from rlvr.engines.loading import TOKENIZER_FILES, load_model, load_tokenizer, resolve_device
from rlvr.errors import ConfigError, DatasetError
from rlvr.tasks.registry import TASKS, load_splits
from rlvr.tasks.sampler import check_batch_fits
from rlvr.orchestrate.engine_choice import ENGINE_BUILDERS
from rlvr.orchestrate.parts import Components, Parts  # noqa: F401 (Components: the old name)
from rlvr.orchestrate.paths import resolve_path
from rlvr.orchestrate.plan import RunPlan
from rlvr.orchestrate.scoring import RewardFn, build_reward_fn
from rlvr.tasks.chat import renderer, with_chat_template
from rlvr.train import OptimConfig, Trainer
from rlvr.train.activation_memory import enable_gradient_checkpointing
from rlvr.train.critic import CriticTrainer, ValueModel
from rlvr.train.fsdp import FSDPTrainer
from rlvr.train.lora import AdaptersOff, load_adapters, wrap_lora
from rlvr.train.schedule import ScheduleConfig
from rlvr.types import Sample


def load_task(config: Config, base: Path, tokenizer=None) -> tuple[list[Sample], list[Sample]]:
    """The task's (train, test), through the registry `rlvr eval` shares (tasks/registry.py)."""
    return load_splits(config.task, lambda path: resolve_path(path, base), prompt_renderer(config, base, tokenizer))


def prompt_renderer(config: Config, base: Path, tokenizer=None):
    """Chat messages → prompt text with the run's template. `tokenizer` (its template set) is
    used when given, else loaded from model.path on the first messages prompt."""
    setting = config.model.chat_template
    fetch = (lambda: tokenizer) if tokenizer is not None else (
        lambda: with_chat_template(load_tokenizer(resolve_path(config.model.path, base)), setting, base))
    return renderer(setting, fetch)


def check_prompt_lengths(samples: list[Sample], tokenizer, context: int | None, max_new: int) -> None:
    if context is None:
        return
    for s in samples:
        n = len(tokenizer(s.prompt, add_special_tokens=False)["input_ids"])
        if n + max_new > context:
            raise DatasetError(f"{s.source}: prompt has {n} tokens; with max_new_tokens={max_new} "
                               f"it exceeds the model's context of {context}")


def load_policy(config: Config, model_path: Path, weights_from: Path | None) -> PreTrainedModel:
    """The policy to train: the base weights, or a checkpoint's. With model.lora_rank > 0 the
    base model wrapped with adapters (rlvr.train.lora), a checkpoint's adapters loaded on resume."""
    m = config.model
    if not m.lora_rank:
        return load_model(weights_from or model_path, m.dtype, m.fp32_head)
    policy = wrap_lora(load_model(model_path, m.dtype, m.fp32_head), m, model_path, seed=config.run.seed)
    if weights_from is not None:
        load_adapters(policy, weights_from)
    return policy


def judge_path_resolved(reward: RewardSection, base: Path) -> RewardSection:
    """The reward settings with an in-process judge's model folder found like `model.path`."""
    j = reward.judge
    if j.backend != "transformers" or not j.model:
        return reward
    return reward.model_copy(update={"judge": j.model_copy(update={"model": str(resolve_path(j.model, base))})})


def load_reference(config: Config, objective: Objective, policy: PreTrainedModel, model_path: Path,
                   device: torch.device, base: Path, tokenizer) -> PreTrainedModel | None:
    """The KL target when the objective has a KL term: a teacher (`model.teacher_path`, on-policy
    distillation), else the base weights; with LoRA and no teacher, the policy with its adapters
    switched off (no second copy)."""
    if not objective.needs_ref:
        return None
    if config.model.teacher_path:
        folder = resolve_path(config.model.teacher_path, base)
        teacher = load_model(folder, config.model.dtype, config.model.fp32_head).eval().to(device)
        check_teacher_vocabulary(tokenizer, teacher, folder)
        return teacher
    if config.model.lora_rank > 0:
        return AdaptersOff(policy)
    return load_model(model_path, config.model.dtype, config.model.fp32_head).eval().to(device)


def check_teacher_vocabulary(tokenizer, teacher: PreTrainedModel, folder: Path) -> None:
    """The teacher scores the policy's token ids, so it must read them as the same tokens: its
    own tokenizer (when its folder has one) must map every token to the same id, and its
    embedding must cover every id. A larger, padded embedding is fine (Qwen2.5's sizes differ
    by padding across the family)."""
    needed = len(tokenizer)
    if teacher.config.vocab_size < needed:
        raise ConfigError(f"model.teacher_path = {str(folder)!r}: an embedding of {teacher.config.vocab_size} "
                          f"tokens, the policy's tokenizer has {needed}; distillation needs the same tokenizer")
    if any((folder / f).is_file() for f in TOKENIZER_FILES) and load_tokenizer(folder).get_vocab() != tokenizer.get_vocab():
        raise ConfigError(f"model.teacher_path = {str(folder)!r}: its tokenizer maps tokens to other ids than the "
                          f"policy's; distillation needs the same tokenizer")


def build_objective(plan: RunPlan) -> Objective:
    """The trainer's loss, from the plan's arguments (`plan.objective`)."""
    return Objective(**plan.objective)


def sampling_params(config: Config) -> SamplingParams:
    """The [sampling] section as the engine reads it."""
    s = config.sampling
    return SamplingParams(max_new_tokens=s.max_new_tokens, temperature=s.temperature, top_p=s.top_p,
                          stop=tuple(s.stop), min_new_tokens=s.min_new_tokens, top_k=s.top_k,
                          replay_support=config.algo.sampling_mask == "replay")


def optim_config(config: Config) -> OptimConfig:
    """The policy's optimiser settings ([train], model.master_weights)."""
    t = config.train
    return OptimConfig(lr=t.lr, betas=t.betas, weight_decay=t.weight_decay, max_grad_norm=t.max_grad_norm,
                       schedule=ScheduleConfig.from_train(t), master_weights=config.model.master_weights == "fp32")


def trainer_options(config: Config) -> dict[str, object]:
    """The trainer's keywords beside the model, the objective and `optim_config`."""
    t = config.train
    return {"micro_batch_size": t.micro_batch_size, "temperature": config.sampling.temperature,
            "logit_chunk": t.logit_chunk}


def critic_options(config: Config) -> dict[str, object]:
    """The value model's trainer's keywords ([critic], and [train]'s micro-batch and clipping)."""
    cr, t = config.critic, config.train
    return {"lr": cr.lr, "loss": cr.value_loss, "clip_eps": cr.value_clip, "micro_batch_size": t.micro_batch_size,
            "max_grad_norm": t.max_grad_norm}


def build(plan: RunPlan, base: Path, weights_from: Path | None = None, reward_fn: RewardFn | None = None) -> Parts:
    """Everything the plan needs, loaded. `weights_from` (a checkpoint) replaces the model's
    weights; `reward_fn` (a Python callable, rlvr.train's `reward=`) replaces the config's reward."""
    config, objective = plan.config, build_objective(plan)
    model_path = resolve_path(config.model.path, base)
    tokenizer = with_chat_template(load_tokenizer(model_path), config.model.chat_template, base)
    device = resolve_device(config.model.device)
    train_set, test_set = TASKS[plan.task].load(config.task, lambda path: resolve_path(path, base),  # before any weight
                                         prompt_renderer(config, base, tokenizer))
    check_batch_fits(len(train_set), config.sampling.prompts_per_step)
    model = load_policy(config, model_path, weights_from).to(device)
    context = getattr(model.config, "max_position_embeddings", None)
    check_prompt_lengths(train_set + test_set, tokenizer, context,
                         max(config.sampling.max_new_tokens, config.eval.max_new_tokens))
    sampling = sampling_params(config)
    ref_model = load_reference(config, objective, model, model_path, device, base, tokenizer)
    engine = ENGINE_BUILDERS[plan.engine](config, model, tokenizer, model_path)  # any copy of its own made before FSDP shards `model`
    t = config.train
    if t.gradient_checkpointing:  # after the engine's copy, which generates without it
        enable_gradient_checkpointing(model)
    trainer = (FSDPTrainer if t.fsdp else Trainer)(model, objective, optim_config(config), **trainer_options(config))
    critic = CriticTrainer(ValueModel(model), **critic_options(config)) if plan.needs_critic else None
    torch.manual_seed(config.run.seed)
    # Model-based rewards (RLPR) read the weights that generated the batch: the in-process
    # engine's copy, which the async trainer thread does not touch while scoring runs.
    policy = (engine.scoring_model if engine.scoring_model is not None else model, tokenizer)
    if reward_fn is None:
        reward_fn = build_reward_fn(judge_path_resolved(config.reward, base), policy)
    return Parts(model=model, tokenizer=tokenizer, engine=engine, reward_fn=reward_fn, trainer=trainer,
                 train_set=train_set, test_set=test_set, sampling=sampling, ref_model=ref_model,
                 objective=objective, critic=critic)
