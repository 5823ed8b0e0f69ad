"""The cross-field rules of a run's configuration: one sentence for each combination of
settings that cannot work together. `Config` (schema.py) runs them once, at load, and raises
with every sentence; nothing here rewrites a value."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:
    from rlvr.config.schema import Config


def incoherences(c: Config) -> Iterator[str]:
    """Yield a sentence for each combination of settings that cannot work together."""
    yield from _algo_incoherences(c)
    yield from _run_incoherences(c)
    yield from _reward_incoherences(c)


def _algo_incoherences(c: Config):
    a = c.algo
    if c.model.teacher_path and a.kl == "none":
        yield "model.teacher_path is the KL target: set algo.kl (k2 in the loss for reverse-KL distillation) and algo.kl_coef"
    if a.kl == "none" and a.kl_coef > 0:
        yield "algo.kl_coef > 0 needs algo.kl set to an estimator (k1, k2 or k3)"
    if a.kl != "none" and a.kl_coef == 0:
        yield f"algo.kl = {a.kl!r} has no effect with algo.kl_coef = 0"
    if a.aggregation == "seq_mean_token_sum_norm" and a.aggregation_constant is None:
        yield "algo.aggregation = 'seq_mean_token_sum_norm' needs algo.aggregation_constant (e.g. the max response length)"
    if a.aggregation != "seq_mean_token_sum_norm" and a.aggregation_constant is not None:
        yield f"algo.aggregation_constant is only used by 'seq_mean_token_sum_norm', not {a.aggregation!r}"
    if a.baseline in ("group_mean", "rloo") and c.sampling.group_size == 1:
        yield f"algo.baseline = {a.baseline!r} needs sampling.group_size >= 2 (a group of one has zero advantage)"
    if (a.surrogate == "dual_clip") != (a.clip_c is not None):
        yield "algo.clip_c is set exactly when algo.surrogate = 'dual_clip'"
    if a.cov_low >= a.cov_high:
        yield f"algo.cov_low ({a.cov_low}) must be below algo.cov_high ({a.cov_high})"
    if (a.surrogate == "dro") != (a.dro_beta is not None):
        yield "algo.dro_beta is set exactly when algo.surrogate = 'dro'"
    taus_set = (a.sapo_tau_pos is not None, a.sapo_tau_neg is not None)
    if taus_set != (a.surrogate == "sapo",) * 2:
        yield "algo.sapo_tau_pos and algo.sapo_tau_neg are set exactly when algo.surrogate = 'sapo'"
    if a.advantage == "reinforce_pp" and a.scale != "none":
        yield "algo.advantage = 'reinforce_pp' whitens over the batch itself: set algo.scale = 'none'"
    if a.advantage == "gae" and (a.baseline != "none" or a.scale != "none"):
        yield "algo.advantage = 'gae' takes its baseline from the critic: set algo.baseline and algo.scale to 'none'"
    if a.advantage != "gae" and (a.lam_critic is not None or a.lam_alpha is not None):
        yield "algo.lam_critic / algo.lam_alpha are only read when algo.advantage = 'gae'"
    if a.advantage == "reinforce_pp" and a.baseline == "rloo":
        yield "algo.advantage = 'reinforce_pp' takes baseline 'none' or 'group_mean' (REINFORCE++-baseline)"


def _run_incoherences(c: Config):
    s, t = c.sampling, c.task
    if s.overlong_cache is not None and s.overlong_cache > s.max_new_tokens:
        yield "sampling.overlong_cache is above sampling.max_new_tokens (the budget L_max)"
    if t.kind == "jsonl" and not t.train_path:
        yield "task.kind = 'jsonl' needs task.train_path"
    if t.kind == "arithmetic" and (t.train_path or t.test_path):
        yield "task.train_path / task.test_path are only read when task.kind = 'jsonl'"
    if c.orchestrate.mode == "sync" and c.orchestrate.max_staleness > 0:
        yield "orchestrate.max_staleness > 0 needs orchestrate.mode = 'async'"
    if c.sampling.min_new_tokens > c.sampling.max_new_tokens:
        yield "sampling.min_new_tokens is above sampling.max_new_tokens"
    if c.orchestrate.backend == "local" and c.orchestrate.rollout_workers > 1:
        yield "orchestrate.rollout_workers > 1 needs orchestrate.backend = 'ray'"
    if c.orchestrate.inflight_updates and c.orchestrate.mode != "async":
        yield "orchestrate.inflight_updates needs orchestrate.mode = 'async'"
    if c.orchestrate.inflight_updates and c.orchestrate.backend != "local":
        yield "orchestrate.inflight_updates is built for the in-process engine only (backend = 'local')"
    if c.orchestrate.inflight_updates and c.model.engine != "hf":
        yield f"orchestrate.inflight_updates needs model.engine = 'hf' (the {c.model.engine!r} engine cannot take weights mid-generation)"
    if c.model.lora_rank and c.train.fsdp:
        yield "model.lora_rank > 0 with train.fsdp is not supported yet"
    e = c.eval
    if e.samples and any(k < 1 or k > e.samples for k in e.k):
        yield f"eval.k = {e.k} must lie in 1 .. eval.samples ({e.samples})"
    valid = {"eval/accuracy", *(f"eval/pass@{k}" for k in e.k if e.samples)}
    if e.keep_best is not None and e.keep_best not in valid:
        yield f"eval.keep_best = {e.keep_best!r} is not an eval metric of this run ({', '.join(sorted(valid))})"
    if t.low > t.high:
        yield f"task.low ({t.low}) is above task.high ({t.high})"


def _reward_incoherences(c: Config):
    r = c.reward
    if r.verifier == "rubric" and not r.rubric:
        yield "reward.verifier = 'rubric' needs at least one [[reward.rubric]] criterion"
    if r.verifier == "rules" and not r.rules:
        yield "reward.verifier = 'rules' needs reward.rules (a list of rules for the judge)"
    if r.verifier != "rubric" and r.rubric:
        yield f"reward.rubric is only read when reward.verifier = 'rubric', not {r.verifier!r}"
    if r.verifier != "rules" and r.rules:
        yield f"reward.rules is only read when reward.verifier = 'rules', not {r.verifier!r}"
    if r.judge.backend == "http" and not r.judge.url:
        yield "reward.judge.backend = 'http' needs reward.judge.url"
    o = c.orchestrate
    if r.verifier == "probability" and o.mode == "async" and (o.backend != "local" or c.model.engine != "hf"):
        yield ("reward.verifier = 'probability' in async mode needs the in-process engine (backend = 'local', "
               "model.engine = 'hf'): it scores with the engine's copy of the weights, and only that engine "
               "has one the trainer thread does not touch")
