"""Build the parts of a run from its validated config: model, engine, task, reward, trainer."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from rlvr.algo import Objective
from rlvr.algo.objective import check_coherence
from rlvr.config import Config
from rlvr.config.schema import RewardSection
from rlvr.engines import Engine, HFEngine, SamplingParams
from rlvr.engines.loading import TOKENIZER_FILES, load_model, load_tokenizer, resolve_device
from rlvr.errors import ConfigError, DatasetError
from rlvr.tasks.sampler import check_batch_fits
from rlvr.orchestrate.scoring import RewardFn, build_reward_fn
from rlvr.tasks import arithmetic_splits, load_jsonl
from rlvr.tasks.chat import with_chat_template
from rlvr.train import OptimConfig, Trainer
from rlvr.train.critic import CriticTrainer, ValueModel
from rlvr.train.fsdp import FSDPTrainer
from rlvr.train.lora import AdaptersOff, engine_copy, engine_model, load_adapters, wrap_lora
from rlvr.types import Sample


@dataclass
class Components:
    model: PreTrainedModel
    ref_model: PreTrainedModel | None
    tokenizer: PreTrainedTokenizerBase
    engine: Engine
    trainer: Trainer
    reward_fn: RewardFn
    train_set: list[Sample]
    test_set: list[Sample]
    sampling: SamplingParams
    critic: CriticTrainer | None = None


def resolve_path(path: str, base: Path) -> Path:
    """Relative paths in a recipe are read from the working directory, else from the repo."""
    p = Path(path)
    if p.is_absolute() or p.exists():
        return p
    return base / p


def load_task(config: Config, base: Path, tokenizer=None) -> tuple[list[Sample], list[Sample]]:
    """The (train, test) samples. `tokenizer` (its chat template set) renders chat-message
    prompts; without one it is loaded from model.path on the first such prompt."""
    t = config.task
    if t.kind == "datasets":
        from rlvr.tasks.chat import renderer
        from rlvr.tasks.files import dataset_splits  # imports `datasets` (~1 s) only when asked

        setting = config.model.chat_template
        fetch = (lambda: tokenizer) if tokenizer is not None else (
            lambda: with_chat_template(load_tokenizer(resolve_path(config.model.path, base)), setting, base))
        return dataset_splits(t, lambda p: resolve_path(p, base), renderer(setting, fetch))
    if t.kind == "arithmetic":
        return arithmetic_splits(seed=t.seed, test_size=t.test_size, low=t.low, high=t.high, ops=t.ops)
    if t.kind == "reasoning_gym":
        from rlvr.tasks.reasoning_gym import gym_splits  # imports reasoning-gym (~1 s) only when asked

        return gym_splits(t.gym_tasks, size=t.gym_size, seed=t.seed, test_size=t.test_size,
                          verifier=None if config.reward.function else config.reward.verifier)
    if t.kind == "humaneval":
        # HumanEval is an evaluation set (all 164 problems are its test split); training on it
        # would leak the benchmark, and an empty train split cannot feed the sampler.
        raise ConfigError("task.kind = 'humaneval' has no training split (HumanEval is an evaluation set); "
                          "train on another task and score with `rlvr eval --task humaneval` (docs/tasks.md)")
    train = load_jsonl(resolve_path(t.train_path, base))
    test = load_jsonl(resolve_path(t.test_path, base)) if t.test_path else []
    return train, test


def check_prompt_lengths(samples: list[Sample], tokenizer, context: int | None, max_new: int) -> None:
    if context is None:
        return
    for s in samples:
        n = len(tokenizer(s.prompt, add_special_tokens=False)["input_ids"])
        if n + max_new > context:
            raise DatasetError(f"{s.source}: prompt has {n} tokens; with max_new_tokens={max_new} "
                               f"it exceeds the model's context of {context}")


def objective_from(config: Config) -> Objective:
    """The recipe's objective; an incoherent combination of axes is a ConfigError."""
    a = config.algo
    surrogate_args = {"eps_low": a.eps_low, "eps_high": a.eps_high}
    if a.surrogate == "dual_clip":
        surrogate_args["clip_c"] = a.clip_c
    if a.surrogate == "sapo":  # a soft gate: no clip range
        surrogate_args = {"tau_pos": a.sapo_tau_pos, "tau_neg": a.sapo_tau_neg}
    if a.surrogate in ("reinforce", "dro"):  # no clip range either
        surrogate_args = {} if a.surrogate == "reinforce" else {"beta": a.dro_beta}
    try:
        objective = Objective(ratio_level=a.ratio_level, surrogate=a.surrogate, surrogate_args=surrogate_args,
                              aggregation=a.aggregation, aggregation_constant=a.aggregation_constant,
                              kl=a.kl, kl_coef=a.kl_coef, kl_placement=a.kl_placement, kl_clamp=a.kl_clamp,
                              entropy_coef=a.entropy_coef, positive_lm_coef=a.positive_lm_coef,
                              off_policy_delta=a.off_policy_delta, entropy_control=a.entropy_control,
                              kl_cov_coef=a.kl_cov_coef)
        per_token = a.advantage == "reinforce_pp" and (a.kl_placement == "reward" and a.kl != "none" or a.gamma < 1)
        check_coherence(objective, advantage_varies_per_token=per_token)
    except ValueError as e:
        raise ConfigError(f"[algo]: {e}") from None
    return objective


def make_engine(config: Config, model: PreTrainedModel, tokenizer, model_path: Path) -> Engine:
    """The in-process engine by default; vLLM with model.engine = 'vllm'; Ray rollout actors
    with orchestrate.backend = 'ray'."""
    o = config.orchestrate
    if config.model.engine == "vllm":
        from rlvr.engines.vllm_engine import VLLMSettings, build_vllm_engine, check_vllm_settings

        check_vllm_settings(backend=o.backend, top_p=config.sampling.top_p, mismatch=config.algo.mismatch,
                            lora_rank=config.model.lora_rank)
        return build_vllm_engine(str(model_path), tokenizer, seed=config.run.seed,
                                 context=getattr(model.config, "max_position_embeddings", None),
                                 weight_keys=model.state_dict().keys(), settings=VLLMSettings(dtype=config.model.dtype))
    if o.backend == "ray":
        from rlvr.engines.ray_engine import RayEngine

        m = config.model
        prepare = functools.partial(engine_model, settings=m, base_path=str(model_path),
                                    seed=config.run.seed) if m.lora_rank else None
        return RayEngine(str(model_path), tokenizer, dtype=config.model.dtype, fp32_head=config.model.fp32_head,
                         workers=o.rollout_workers, address=o.ray_address, seed=config.run.seed,
                         prepare_model=prepare, chunk_timeout_s=config.run.stall_timeout_s)
    return HFEngine(engine_copy(model), tokenizer, seed=config.run.seed)


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


def build(config: Config, base: Path, weights_from: Path | None = None) -> Components:
    """Everything a run needs. `weights_from` (a checkpoint) replaces the model's weights."""
    objective = objective_from(config)
    model_path = resolve_path(config.model.path, base)
    tokenizer = with_chat_template(load_tokenizer(model_path), config.model.chat_template, base)
    device = resolve_device(config.model.device)
    train_set, test_set = load_task(config, base, tokenizer)  # bad data fails before any weight loads
    check_batch_fits(len(train_set), config.sampling.prompts_per_step)
    model = load_policy(config, model_path, weights_from).to(device)
    context = getattr(model.config, "max_position_embeddings", None)
    check_prompt_lengths(train_set + test_set, tokenizer, context,
                         max(config.sampling.max_new_tokens, config.eval.max_new_tokens))
    s = config.sampling
    sampling = SamplingParams(max_new_tokens=s.max_new_tokens, temperature=s.temperature,
                              top_p=s.top_p, stop=tuple(s.stop), min_new_tokens=s.min_new_tokens)
    ref_model = load_reference(config, objective, model, model_path, device, base, tokenizer)
    engine = make_engine(config, model, tokenizer, model_path)  # its own copy, made before FSDP shards `model`
    t = config.train
    trainer = (FSDPTrainer if t.fsdp else Trainer)(
        model, objective, OptimConfig(lr=t.lr, betas=t.betas, weight_decay=t.weight_decay,
                                      max_grad_norm=t.max_grad_norm),
        micro_batch_size=t.micro_batch_size, temperature=s.temperature)
    critic = None
    if config.algo.advantage == "gae":
        cr = config.critic
        critic = CriticTrainer(ValueModel(model), lr=cr.lr, loss=cr.value_loss, clip_eps=cr.value_clip,
                               micro_batch_size=t.micro_batch_size, max_grad_norm=t.max_grad_norm)
    torch.manual_seed(config.run.seed)
    # Model-based rewards (RLPR) read the weights that generated the batch: the in-process
    # engine's copy, which the async trainer thread does not touch while scoring runs.
    policy = (engine.scoring_model if engine.scoring_model is not None else model, tokenizer)
    reward_fn = build_reward_fn(judge_path_resolved(config.reward, base), policy)
    return Components(model, ref_model, tokenizer, engine, trainer, reward_fn,
                      train_set, test_set, sampling, critic)
