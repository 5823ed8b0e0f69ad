"""The validated configuration of a run. Recipes (TOML files in recipes/) set it.

Every model forbids unknown keys and is frozen. Cross-field rules (config/coherence.py) run in `Config`'s
validator, which raises and never rewrites a value.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional

from pydantic import Field, field_validator, model_validator

from rlvr import names
from rlvr.config.algo_section import AlgoSection
from rlvr.config.coherence import incoherences
from rlvr.config.reward_section import REMOVED_REWARD_KEYS, JudgeSection, RewardSection, RubricCriterion  # noqa: F401
from rlvr.config.section import Section, refuse
from rlvr.config.values import check_folder_path, check_run_name
from rlvr.config.sections_env import EnvSection, GuessNumberTask, NoEnv  # noqa: F401
from rlvr.config.task_sections import (MAX_ARITHMETIC_PROBLEMS, TASK_SECTIONS, ArithmeticTask, DatasetsTask, HumanEvalTask, JsonlTask,  # noqa: F401
                                       ReasoningGymTask, TaskSection, task_section, task_without_leftovers)
from rlvr.config.vllm_section import VLLMSection

# Below this the tempered logits logits / T overflow float32 for |logits| > 3e35 and round to
# greedy anyway; both the engine and the trainer divide by T.
MIN_TEMPERATURE = 1e-3
Beta = Annotated[float, Field(ge=0, lt=1)]  # Adam's moment decay: 1 or more never forgets, or grows


class RunSection(Section):
    name: str = "run"
    seed: int = Field(0, ge=0, le=2**63 - 1)
    output_dir: str = "runs"
    # Watchdog (docs/scaling.md): a stage (sample, generate, score, train, sync, checkpoint, a
    # Ray chunk) with no progress for this long dumps every thread's stack and fails; 0: off.
    stall_timeout_s: float = Field(1800.0, ge=0, le=604800)
    # SIGTERM (a scheduler's preemption) stops after the step and checkpoints, like Ctrl-C; if
    # that is not done this many seconds after the signal, the run stops at once from the last
    # checkpoint (schedulers kill 30 s after SIGTERM by default). 0: at once.
    sigterm_grace_s: float = Field(20.0, ge=0, le=86400)

    @field_validator("name")
    @classmethod
    def _one_folder_name(cls, name: str) -> str:
        return check_run_name(name)

    @field_validator("output_dir")
    @classmethod
    def _usable_path(cls, path: str) -> str:
        return check_folder_path(path)


class ModelSection(Section):
    path: str = "models/tiny-arith"
    dtype: names.DTYPE.literal() = "float32"
    # With bfloat16: "fp32" keeps an fp32 copy of the trainable weights in the optimizer (the
    # bf16 weights are refreshed from it each step; rlvr.train.master_weights). No effect in float32.
    master_weights: names.MASTER_WEIGHTS.literal() = "fp32"
    # Where the policy, reference, critic and in-process engine live: "cpu", "cuda", "cuda:N",
    # or "auto" (cuda when torch sees a GPU). Batches are built on the CPU and moved per use.
    device: str = Field("cpu", pattern=r"^(cpu|auto|cuda(:[0-9]+)?)$")
    engine: names.ENGINE.literal() = "hf"  # rollout engine: in-process transformers, or vLLM (CPU or CUDA)
    vllm: VLLMSection = VLLMSection()  # [model.vllm]: how vLLM starts (config/vllm_section.py)
    # Logits and log-probs in float32 whatever the model dtype (ScaleRL's FP32 LM head). Off,
    # they keep the model dtype (cheaper, noisier ratios in bfloat16).
    fp32_head: bool = True
    # LoRA through peft (extra `lora`): rank 0 trains every weight; rank r > 0 trains adapters
    # only, and only the adapters travel to the rollout engine.
    lora_rank: int = Field(0, ge=0, le=4096)
    lora_alpha: float = Field(16.0, gt=0, le=65536)
    lora_dropout: float = Field(0.0, ge=0, lt=1)
    lora_targets: list[str] = ["q_proj", "k_proj", "v_proj", "o_proj"]
    # On-policy distillation: the KL term's target is this teacher (same tokenizer) instead of
    # the initial weights. algo.kl = "k2" in the loss gives the reverse-KL gradient per token.
    teacher_path: Optional[str] = None
    # How a prompt given as chat messages becomes text (rlvr.tasks.chat): "auto" = the
    # tokenizer's own template, "none" = no template (messages refused), or a jinja file's path.
    # Plain-text prompts are used as they are in every case.
    chat_template: str = Field("auto", min_length=1)


class SamplingSection(Section):
    group_size: int = Field(8, ge=1, le=4096)
    prompts_per_step: int = Field(16, ge=1, le=1_000_000)
    temperature: float = Field(1.0, ge=MIN_TEMPERATURE, le=10)
    top_p: float = Field(1.0, gt=0, le=1)
    top_k: int = Field(0, ge=0, le=10_000_000)  # the k most probable tokens, then top_p within them; 0 = off
    max_new_tokens: int = Field(8, ge=1, le=1048576)
    min_new_tokens: int = Field(0, ge=0, le=1048576)  # EOS is suppressed until this many tokens (benchmarks)
    stop: list[str] = []
    # Dynamic sampling (DAPO): "drop" groups whose rewards are all equal, or "refill" the batch
    # with newly generated groups, at most max_refill_rounds extra generation rounds a step.
    zero_variance: names.ZERO_VARIANCE.literal() = "keep"
    max_refill_rounds: int = Field(4, ge=0, le=1000)
    overlong_cache: Optional[int] = Field(None, gt=0, le=1048576)  # DAPO soft punishment over the last N tokens
    mask_truncated: bool = False  # drop completions cut at max_new_tokens from the loss
    curriculum: names.CURRICULUM.literal() = "none"
    retire_at: float = Field(0.9, gt=0, le=1)  # a prompt whose pass rate reaches this is retired


class TrainSection(Section):
    steps: int = Field(100, ge=1, le=1000000000)
    # Adam moves each weight by about lr per update: above 1 every weight jumps past its own
    # scale (and near float32's limit the update itself overflows).
    lr: float = Field(1e-5, gt=0, le=1)
    betas: tuple[Beta, Beta] = (0.9, 0.999)
    weight_decay: float = Field(0.0, ge=0, le=1)
    max_grad_norm: float = Field(1.0, gt=0, le=1e6)
    micro_batch_size: int = Field(64, ge=1, le=1_000_000)
    # Token log-probs take the LM head over this many tokens at a time, so no (B, T, V) float32
    # logits exist at once (0: all at once). Results are the same; only peak memory changes.
    logit_chunk: int = Field(512, ge=0, le=16777216)
    updates_per_batch: int = Field(1, ge=1, le=64)
    time_limit_s: Optional[float] = Field(None, gt=0, le=3.2e7)  # stop after this much training time
    fsdp: bool = False  # shard the trainer with PyTorch FSDP across the ranks of `torchrun`
    # lr over the train.steps * updates_per_batch optimiser updates (formulas: train/schedule.py)
    lr_schedule: names.LR_SCHEDULE.literal() = "constant"
    warmup_steps: int = Field(0, ge=0, le=1000000000)
    warmup_ratio: Optional[float] = Field(None, ge=0, lt=1)
    min_lr_ratio: float = Field(0.0, ge=0, le=1)  # linear / cosine: the last update's lr over train.lr
    gradient_checkpointing: bool = False  # recompute activations in the backward (train/activation_memory.py)


class EvalSection(Section):
    every: int = Field(50, ge=0, le=1000000000)  # 0: only before and after training
    size: int = Field(200, ge=0, le=10_000_000)  # held-out prompts per evaluation; 0 disables
    # one completion (an episode's turn); unset in a recipe: its sampling.max_new_tokens (Config._eval_budget)
    max_new_tokens: int = Field(8, ge=1, le=1048576)
    samples: int = Field(0, ge=0, le=4096)  # n sampled completions per prompt for pass@k; 0: greedy only
    k: list[Annotated[int, Field(ge=1, le=4096)]] = [1]
    temperature: float = Field(1.0, ge=MIN_TEMPERATURE, le=10)
    keep_best: Optional[str] = None  # keep the checkpoint with the best value of this eval metric
    forecast_every: int = Field(0, ge=0, le=1000000000)  # refit the accuracy-vs-FLOPs sigmoid every N steps


class LogSection(Section):
    samples_per_step: int = Field(4, ge=0, le=1_000_000)
    tensorboard: bool = False
    progress: Literal["auto", "rich", "plain", "none"] = "auto"
    # Weights & Biases (orchestrate/wandb_log.py): "offline" writes RUN_DIR/wandb, sends nothing
    wandb: bool = False
    wandb_project: str = Field("rlvr", min_length=1)
    wandb_mode: Literal["offline", "online"] = "offline"


class CheckpointSection(Section):
    """A checkpoint is written when `every` steps or `every_minutes` of wall time have passed
    since the last one, whichever comes first (`every` unset or `every_minutes = 0` turns that
    trigger off), and always after the
    last step, at `train.time_limit_s` and on Ctrl-C. A kill -9 loses the steps since the last."""

    every: Optional[int] = Field(None, ge=1, le=1000000000)  # steps between checkpoints; 1 is every step
    every_minutes: float = Field(10.0, ge=0, le=10080)  # wall minutes between checkpoints; 0 turns the clock off
    # newest checkpoints kept; an older intact one is the fallback for a damaged newest
    keep: int = Field(2, ge=1, le=1000)


class CriticSection(Section):
    """The value model of `algo.advantage = "gae"` (PPO, VAPO)."""

    lr: float = Field(1e-5, gt=0, le=1)
    value_loss: names.VALUE_LOSS.literal() = "clipped"
    value_clip: float = Field(0.2, gt=0, le=1e6)
    pretrain_steps: int = Field(0, ge=0, le=1000000000)  # VAPO value pretraining: steps that train only the critic


class OrchestrateSection(Section):
    mode: names.ORCHESTRATE_MODE.literal() = "sync"
    max_staleness: int = Field(0, ge=0, le=1000)  # async: policy versions a batch may lag the trainer
    backend: names.ORCHESTRATE_BACKEND.literal() = "local"
    ray_address: str = "auto"  # a running cluster (`ray start --head`)
    # ray: rollout actors; local: processes that sample side by side over the model's weights in
    # shared memory, each with this process's threads shared out (CPU; rlvr.engines.local_pool)
    rollout_workers: int = Field(1, ge=1, le=1024)
    # PipelineRL: new weights reach the engine between decode steps of a running generation;
    # each token records the policy version that produced it.
    inflight_updates: bool = False
    # async: a fixed schedule (batch i sampled by the weights of step max(0, i - k), an in-flight
    # update at a fixed decode forward) and checkpoints that keep the batches made but not yet
    # trained, so a run, run again or killed and resumed, gives the same numbers; false: each
    # batch takes the newest weights when it starts (and in flight as they arrive), which depends
    # on timing (orchestrate/exact_async.py, docs/scaling.md). Sync runs are always exact.
    exact: bool = False
    # exact async with in-flight updates: a batch's update lands before decode forward
    # ceil(inflight_at * sampling.max_new_tokens), counted across the batch's chunks and refills
    inflight_at: float = Field(0.5, gt=0, le=1)


class Config(Section):
    run: RunSection = RunSection()
    model: ModelSection = ModelSection()
    task: TaskSection = ArithmeticTask()
    reward: RewardSection = RewardSection()
    sampling: SamplingSection = SamplingSection()
    algo: AlgoSection = AlgoSection()
    train: TrainSection = TrainSection()
    eval: EvalSection = EvalSection()
    log: LogSection = LogSection()
    checkpoint: CheckpointSection = CheckpointSection()
    orchestrate: OrchestrateSection = OrchestrateSection()
    critic: CriticSection = CriticSection()
    env: EnvSection = NoEnv()  # multi-turn environments (config/sections_env.py); "none": single-turn

    @field_validator("task", mode="before")
    @classmethod
    def _task_leftovers(cls, value: Any) -> Any:
        return task_without_leftovers(value)

    @model_validator(mode="before")
    @classmethod
    def _eval_budget(cls, data: Any) -> Any:
        """eval.max_new_tokens left out of a recipe is its sampling.max_new_tokens: an evaluation
        turn gets the training turn's budget (a tool call cut at 8 tokens scored 0, issue 25)."""
        if not isinstance(data, dict) or not isinstance(data.get("sampling"), dict):
            return data
        ev = data.get("eval", {})
        if not isinstance(ev, dict) or "max_new_tokens" in ev or "max_new_tokens" not in data["sampling"]:
            return data
        return {**data, "eval": {**ev, "max_new_tokens": data["sampling"]["max_new_tokens"]}}

    @model_validator(mode="after")
    def _coherent(self) -> "Config":
        refuse(incoherences(self))  # every cross-field rule: rlvr/config/coherence.py
        return self
