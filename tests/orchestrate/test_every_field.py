"""Every config field reaches what it configures: set to a non-default (valid) value, it
changes the run's wiring (the plan without its config, and the settings `build` hands the
engine, the optimiser, the trainer and the critic: orchestrate/components.py), or it is in
READ_WHERE_USED, the documented list of fields read from `plan.config` by the part that uses
them (and then it does not change the wiring: the list is exactly the rest).

Issue 28: `objective_from` copied [algo] fields by hand and dropping `algo.off_policy_delta`
passed the whole suite; `train.max_grad_norm` ignored was caught only by a golden run.

[task] and [env] are keyed on kind and handed whole to their kind's builder (TASKS[kind].load,
ENV_BUILDERS[kind]), which reads each field of its own class; they are not enumerated here.
"""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel

from rlvr.config import Config, load_config
from rlvr.errors import ConfigError
from rlvr.orchestrate.components import critic_options, optim_config, sampling_params, trainer_options
from rlvr.orchestrate.plan import plan_run

SRC = Path(__file__).resolve().parents[2] / "src" / "rlvr"
KEYED = ("task", "env")

# field -> the modules (under src/rlvr) that read it from the config where it is used.
_LOOP, _RUN, _PARTS, _ROLL = "orchestrate/loop.py", "orchestrate/run.py", "orchestrate/components.py", "orchestrate/rollouts.py"
_SAMPLING, _ENGINES, _SCORING = "orchestrate/dynamic_sampling.py", "orchestrate/engine_choice.py", "orchestrate/scoring.py"
READ_WHERE_USED: dict[str, tuple[str, ...]] = {
    "run.name": (_RUN,), "run.seed": (_ROLL, _PARTS, _ENGINES), "run.output_dir": (_RUN,),
    "run.stall_timeout_s": (_LOOP,),
    "model.path": (_PARTS,), "model.dtype": (_PARTS,), "model.device": (_PARTS,), "model.fp32_head": (_PARTS,),
    "model.lora_rank": (_PARTS, "train/lora.py"), "model.lora_alpha": ("train/lora.py",),
    "model.lora_dropout": ("train/lora.py",), "model.lora_targets": ("train/lora.py",),
    "model.teacher_path": (_PARTS,), "model.chat_template": (_PARTS,),
    "sampling.group_size": (_ROLL,), "sampling.prompts_per_step": (_SAMPLING, _PARTS), "sampling.zero_variance": (_SAMPLING,),
    "sampling.max_refill_rounds": (_SAMPLING,), "sampling.curriculum": (_ROLL,), "sampling.retire_at": (_ROLL,),
    "train.time_limit_s": (_LOOP,),
    "train.fsdp": (_PARTS,), "train.gradient_checkpointing": (_PARTS,),
    "critic.pretrain_steps": ("orchestrate/learner.py",),
    "eval.every": (_LOOP,), "eval.size": (_LOOP,), "eval.max_new_tokens": (_LOOP,), "eval.samples": (_LOOP,),
    "eval.k": ("evaluate/sampled.py",), "eval.temperature": ("evaluate/sampled.py",), "eval.keep_best": (_LOOP,),
    "eval.forecast_every": (_LOOP,),
    "log.samples_per_step": (_LOOP,), "log.tensorboard": (_LOOP,), "log.progress": (_RUN,), "log.wandb": (_RUN,),
    "log.wandb_project": ("orchestrate/wandb_log.py",), "log.wandb_mode": ("orchestrate/wandb_log.py",),
    "checkpoint.every": (_LOOP,), "checkpoint.every_minutes": (_LOOP,), "checkpoint.keep": (_LOOP,),
    "orchestrate.max_staleness": (_LOOP,), "orchestrate.inflight_updates": (_LOOP,),
    "orchestrate.exact": (_LOOP,), "orchestrate.inflight_at": (_LOOP,),
    "orchestrate.backend": (_ENGINES,), "orchestrate.ray_address": (_ENGINES,), "orchestrate.rollout_workers": (_ENGINES,),
    "reward.verifier": (_SCORING, "orchestrate/model_rewards.py"), "reward.function": (_SCORING,),
    "reward.on_error": (_ROLL, "orchestrate/env_choice.py"), "reward.rubric": ("orchestrate/model_rewards.py",),
    "reward.rules": ("orchestrate/model_rewards.py",),
    **{f"reward.judge.{name}": ("orchestrate/model_rewards.py",)
       for name in ("backend", "model", "url", "samples", "max_new_tokens", "temperature", "timeout_s")},
    "run.sigterm_grace_s": (_RUN,),
    "reward.score_workers": (_SCORING,), "reward.score_pool": (_SCORING,), "reward.call_timeout_s": (_SCORING,),
    # [model.vllm]: read by the vLLM engine itself when model.engine = "vllm" (engines/vllm_engine.py)
    **{f"model.vllm.{name}": ("engines/vllm_engine.py",) for name in ("dtype", "cpu_kv_cache_gib", "gpu_memory_utilization",
                                                                      "enforce_eager", "compile", "max_model_len",
                                                                      "prefix_caching")},
    "reward.template": ("rewards/build.py",),
    # [reward.<verifier>]: each program verifier's own options (config/reward_section.py)
    **{f"reward.{kind}.{name}": ("rewards/build.py",) for kind, names in (
        ("math", ("extract", "timeout_s", "rounded_golds")), ("code", ("timeout_s", "test_timeout_s", "workers")),
        ("format", ("strict",)), ("exact", ("case_sensitive",)), ("instructions", ("strict",)))
       for name in names},
}


def leaf_fields(model: type[BaseModel], prefix: str = "") -> list[str]:
    out = []
    for name, info in model.model_fields.items():
        kind = info.annotation
        tables = [a for a in typing.get_args(kind) if a is not type(None)]  # an [algo.<kind>] table: Optional
        if typing.get_origin(kind) is typing.Union and len(tables) == 1 and isinstance(tables[0], type) \
                and issubclass(tables[0], BaseModel):
            kind = tables[0]
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            out += leaf_fields(kind, f"{prefix}{name}.")
        elif f"{prefix}{name}".split(".")[0] not in KEYED:
            out.append(f"{prefix}{name}")
    return out


def wiring(config: Config) -> dict[str, object]:
    """What the config decides before anything loads, by the part it reaches: the plan's
    objective, batch chain and names, and the settings `build` hands on."""
    plan = plan_run(config)
    return {"objective": plan.objective, "batch": plan.batch,
            "plan": dataclasses.replace(plan, config=None, objective=None, batch=None),
            "sampling": sampling_params(config), "optim": optim_config(config), "trainer": trainer_options(config),
            "critic": critic_options(config)}


def changed_parts(one: list[str], other: list[str]) -> set[str]:
    a, b = wiring(load_config(None, one)), wiring(load_config(None, other))
    return {part for part in a if a[part] != b[part]}


# The fields that reach more than one part (every other field reaches exactly one): a part
# that stops reading one of them leaves the set short.
REACHES: dict[str, set[str]] = {
    "sampling.temperature": {"batch", "sampling", "trainer"},  # log-probs at the temperature that sampled
    "sampling.max_new_tokens": {"batch", "sampling"},  # the budget, and the overlong shaping's
    "algo.sampling_mask": {"batch", "sampling"},  # the engine records the kept sets, the chain renormalises
    "train.max_grad_norm": {"optim", "critic"},  # both clip
    "train.micro_batch_size": {"trainer", "critic"},
    **{f"algo.{name}": {"batch", "objective"}  # the KL in the reward (chain) or in the loss (objective)
       for name in ("kl", "kl_coef", "kl_placement", "kl_clamp", "positive_lm_coef", "entropy_control")},
}

# Kept only to refuse an old key with its new name (config/schema.py): no value is valid.
REFUSED = ("reward.timeout_s", "reward.format_template")
FIELDS = [f for f in leaf_fields(Config) if f not in REFUSED]


def _candidates(config: Config, field: str) -> list:
    """Values to try for `field`, each other than its default, by its annotation."""
    *path, name = field.split(".")
    section = config
    for p in path:
        section = getattr(section, p)
    info, default = type(section).model_fields[name], getattr(section, name)
    kind = info.annotation
    args = [a for a in typing.get_args(kind) if a is not type(None)]
    if typing.get_origin(kind) is typing.Literal:
        return [v for v in args if v != default]
    if typing.get_origin(kind) is typing.Union and args:
        kind = args[0]
    if kind is bool:
        return [not default]
    if kind is int and default is None:
        return [1, 2, 64]
    if kind is int:
        return [v for v in (default + 1, 1, 2, 64, default * 2) if v != default]
    if kind is float:
        return [v for v in (0.5, 0.1, 2.0, 10.0, 0.95, 1e-3) if v != default]
    if kind is str:
        return ["other"]
    return []


def two_settings(field: str) -> tuple[list[str], list[str]]:
    """Two valid sets of overrides that differ in `field` only: NON_DEFAULT's, else the
    defaults and the defaults with `field` at the first valid non-default value."""
    if field in NON_DEFAULT:
        companions, a, b = NON_DEFAULT[field]
        return companions + [f"{field}={a}"], companions + [f"{field}={b}"]
    base = load_config(None)
    for value in _candidates(base, field):
        override = f"{field}={value!r}" if isinstance(value, str) else f"{field}={str(value).lower() if isinstance(value, bool) else value}"
        try:
            load_config(None, [override])
        except ConfigError:
            continue
        return [], [override]
    raise AssertionError(f"{field}: no valid non-default value found; give one in NON_DEFAULT")


# field -> (the other overrides it needs to be valid, a value, another value); TOML values.
# [algo.<kind>] / [reward.<kind>]: a field of a kind's table, set with that kind chosen (and what
# the kind needs besides), at two valid values.
_CHOOSE = {"gae": ["algo.baseline='none'", "algo.scale='none'"], "reinforce_pp": ["algo.scale='none'"],
           "format": ["reward.template='boxed'"]}
_REQUIRED = {"sapo": {"tau_pos": "1.0", "tau_neg": "1.05"}, "vespo": {"k_pos": "2.0", "lambda_pos": "3.0", "k_neg": "2.0",
                                                                      "lambda_neg": "3.0"}}
_TWO = {"clip_c": ("3.0", "4.0"), "tau_pos": ("1.0", "2.0"), "tau_neg": ("1.0", "2.0"), "beta": ("0.1", "0.2"),
        "k_pos": ("2.0", "4.0"), "lambda_pos": ("2.0", "4.0"), "k_neg": ("2.0", "4.0"), "lambda_neg": ("2.0", "4.0"),
        "gamma": ("1.0", "0.9"), "lam": ("0.95", "0.8"), "lam_critic": ("0.9", "0.8"), "lam_alpha": ("0.05", "0.1"),
        "constant": ("8.0", "16.0"), "cap": ("2.0", "3.0"), "low": ("0.5", "0.3"), "ratio": ("0.0002", "0.3"),
        "high": ("5.0", "6.0"), "coef": ("1.0", "2.0"), "extract": ("['boxed']", "['answer_tag']"),
        "timeout_s": ("2.0", "3.0"), "rounded_golds": ("false", "true"), "test_timeout_s": ("5.0", "4.0"),
        "workers": ("2", "3"), "strict": ("false", "true"), "case_sensitive": ("false", "true")}


def _table_settings() -> dict[str, tuple[list[str], str, str]]:
    from rlvr.config.algo_section import TABLE_AXIS, ALL_TABLES
    from rlvr.config.reward_section import REWARD_TABLES

    tables = [("algo", kind, cls, f"algo.{TABLE_AXIS[kind]}='{kind}'") for kind, cls in ALL_TABLES.items()]
    tables += [("reward", kind, cls, f"reward.verifier='{kind}'") for kind, cls in REWARD_TABLES.items()]
    out = {}
    for section, kind, cls, choose in tables:
        for name in cls.model_fields:
            required = [f"{section}.{kind}.{k}={v}" for k, v in _REQUIRED.get(kind, {}).items() if k != name]
            out[f"{section}.{kind}.{name}"] = ([choose, *_CHOOSE.get(kind, []), *required], *_TWO[name])
    return out


_KL = ["algo.kl='k3'", "algo.kl_coef=0.1"]
NON_DEFAULT: dict[str, tuple[list[str], str, str]] = {
    "model.device": ([], "'cpu'", "'cuda'"),
    "model.lora_targets": (["model.lora_rank=4"], "['q_proj']", "['v_proj']"),
    "model.teacher_path": (_KL, "'a'", "'b'"),
    "reward.judge.backend": (["reward.verifier='judge'", "reward.judge.model='m'", "reward.judge.url='http://x'"],
                             "'transformers'", "'http'"),
    "reward.rubric": (["reward.verifier='rubric'"], "[{name = 'a', verifier = 'math', weight = 1.0}]",
                      "[{name = 'b', verifier = 'math', weight = 1.0}]"),
    "reward.rules": (["reward.verifier='rules'", "reward.judge.model='m'"], "['Be brief.']", "['Be kind.']"),
    "sampling.stop": ([], "[]", "['\\n']"),
    "algo.advantage": (["algo.baseline='none'", "algo.scale='none'"], "'group'", "'reinforce_pp'"),
    **_table_settings(),
    "algo.kl": (["algo.kl_coef=0.1"], "'k1'", "'k3'"),
    "algo.kl_coef": (_KL[:1], "0.1", "0.2"),
    "algo.kl_clamp": (_KL, "1.0", "2.0"),
    "algo.sampling_mask": (["sampling.top_p=0.9"], "'none'", "'replay'"),
    "train.betas": ([], "[0.9, 0.999]", "[0.9, 0.99]"),
    "train.min_lr_ratio": (["train.lr_schedule='cosine'"], "0.0", "0.1"),
    "eval.k": (["eval.samples=4"], "[1]", "[1, 2]"),
    "eval.keep_best": (["eval.samples=4"], "'eval/accuracy'", "'eval/pass@1'"),
    "orchestrate.max_staleness": (["orchestrate.mode='async'"], "0", "1"),
    "orchestrate.rollout_workers": (["orchestrate.backend='ray'"], "1", "2"),
    "orchestrate.inflight_updates": (["orchestrate.mode='async'", "orchestrate.max_staleness=1"], "false", "true"),
    "orchestrate.exact": (["orchestrate.mode='async'", "orchestrate.max_staleness=1"], "false", "true"),
    "orchestrate.inflight_at": (["orchestrate.mode='async'", "orchestrate.max_staleness=1", "orchestrate.exact=true",
                                 "orchestrate.inflight_updates=true"], "0.5", "0.25"),
}


@pytest.mark.parametrize("field", FIELDS)
def test_every_field_changes_the_wiring_or_is_read_where_used(field):
    one, other = two_settings(field)
    changed = changed_parts(one, other)
    if field in READ_WHERE_USED:
        name = field.split(".")[-1]
        missing = [m for m in READ_WHERE_USED[field] if f".{name}" not in (SRC / m).read_text()]
        assert not missing, f"{field}: READ_WHERE_USED names {missing}, which do not read .{name}"
        assert not changed, f"{field} changes the plan or the built settings: take it out of READ_WHERE_USED"
    else:
        want = REACHES.get(field)
        assert len(changed) == 1 if want is None else changed == want, (
            f"{field} ({one} vs {other}) changes {sorted(changed)}; expected "
            f"{sorted(want) if want else 'one part'} (REACHES)")


@pytest.mark.parametrize("field", REFUSED)
def test_the_refused_keys_take_no_value(field):
    with pytest.raises(ConfigError, match=field.split(".")[-1]):
        load_config(None, [f"{field}=1"])
