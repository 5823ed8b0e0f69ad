"""Every cross-field rule of a run's configuration, in one place: one sentence for each
combination of settings that cannot work together, naming the config key(s) at fault.

`Config` (schema.py) runs `incoherences` once, at load, and raises with every sentence. The
rules of one section alone run in that section's validators, next to it (task_sections.py,
reward_section.py, algo_section.py), so that `rlvr verify`, which reads a [reward] section
alone, gets them too. Nothing here rewrites
a value, and nothing imports torch: `load_config` and `rlvr recipes show` refuse an incoherent
recipe before any model code loads. Checks that need the machine (WORLD_SIZE, a package's list
of generators, a model's vocabulary) stay where they run. The rules of the objective's axes and
the run's machinery are in coherence_run.py, those of [env] in coherence_env.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from rlvr import names
from rlvr.config.coherence_env import env_incoherences
from rlvr.config.coherence_run import algo_incoherences, run_incoherences

if TYPE_CHECKING:
    from rlvr.config.schema import Config


def incoherences(c: Config) -> Iterator[str]:
    """Yield a sentence for each combination of settings that cannot work together."""
    yield from algo_incoherences(c)
    yield from run_incoherences(c)
    yield from task_incoherences(c)
    yield from eval_incoherences(c)
    yield from reward_incoherences(c)
    yield from env_incoherences(c)


def task_incoherences(c: Config) -> Iterator[str]:
    t, r = c.task, c.reward
    if t.kind in ("jsonl", "datasets") and not t.train_path:
        yield f"task.kind = {t.kind!r} needs task.train_path"
    if t.kind == "datasets" and t.test_path and t.test_fraction is not None:
        yield "task.test_path and task.test_fraction both give a test split: set one"
    if t.kind in ("arithmetic", "guess_number") and t.low > t.high:
        yield f"task.low ({t.low}) is above task.high ({t.high})"
    if t.kind == "humaneval":
        # all 164 problems are its test split: training on it would leak the benchmark, and an
        # empty train split cannot feed the sampler
        yield ("task.kind = 'humaneval' has no training split (HumanEval is an evaluation set); "
               "train on another task and score with `rlvr eval --task humaneval` (docs/tasks.md)")
    if t.kind == "reasoning_gym" and not t.gym_tasks:
        yield "task.gym_tasks is empty: name at least one reasoning-gym generator"
    if t.kind == "reasoning_gym" and r.verifier == "math" and not r.function:
        if wrong := [g for g in t.gym_tasks if g not in names.NUMERIC_GYM_GENERATORS]:
            yield (f"reward.verifier = 'math' cannot score the non-numeric generator(s) {wrong} of "
                   "task.gym_tasks (rlvr/names.py NUMERIC_GYM_GENERATORS lists the numeric ones); "
                   "use reward.verifier = 'exact'")


def keep_best_metrics(c: Config) -> set[str]:
    """The eval metrics this run logs that `eval.keep_best` may name: those where higher is
    better (the loop keeps the maximum). An environment run that plays episodes (docs/environments.md;
    not env.kind = "single_turn", evaluated as a single-turn run) also logs,
    with eval.samples, `eval/success_rate`, the sampled episodes' success@1; its `eval/env/*`
    counts (turns, stop reasons) and `eval/disagree_frac` are not scores."""
    e = c.eval
    valid = {"eval/accuracy", *(f"eval/pass@{k}" for k in e.k if e.samples)}
    if c.env.kind not in names.SINGLE_TURN_KINDS and e.samples:  # single_turn evaluates as "none" does
        valid.add("eval/success_rate")
    return valid


def eval_incoherences(c: Config) -> Iterator[str]:
    e = c.eval
    if e.samples and any(k < 1 or k > e.samples for k in e.k):
        yield f"eval.k = {e.k} must lie in 1 .. eval.samples ({e.samples})"
    valid = keep_best_metrics(c)
    if e.keep_best is not None and e.keep_best not in valid:
        yield f"eval.keep_best = {e.keep_best!r} is not an eval metric of this run ({', '.join(sorted(valid))})"
    if e.keep_best in valid and e.size == 0:
        yield f"eval.keep_best = {e.keep_best!r} needs eval.size > 0 (with eval.size = 0 nothing is evaluated)"


def reward_incoherences(c: Config) -> Iterator[str]:
    r, o = c.reward, c.orchestrate
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
    if r.verifier == "probability" and o.mode == "async" and (o.backend != "local" or c.model.engine != "hf"):
        yield ("reward.verifier = 'probability' in async mode needs the in-process engine (backend = 'local', "
               "model.engine = 'hf'): it scores with the engine's copy of the weights, and only that engine "
               "has one the trainer thread does not touch")
