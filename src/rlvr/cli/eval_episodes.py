"""`rlvr eval MODEL --recipe ENV_RECIPE`: evaluation on environments (docs/environments.md,
"Evaluation on environments").

When the recipe `rlvr eval` takes its defaults from (cli/eval_defaults.py: `--recipe`, else the
run's config.toml for a checkpoint in a run folder) has an [env] section (env.kind other than
"none") and no `--task` is given, every held-out task of the recipe's [task] test split (the
first `--limit`) is played `--n` times as an episode of that environment, with its limits,
through the run's `EpisodeRunner` (orchestrate/episode_eval.py). A turn samples at most
`--max-new-tokens` (the recipe's eval.max_new_tokens) at `--temperature` (eval.temperature);
temperature 0 is greedy, so one episode a task. Summaries: rlvr.evaluate.episodes_eval.

`--compare OTHER` plays the same tasks with the same episode seeds on a second model (paired
differences: rlvr.evaluate.episodes_compare). The tasks are played `--chunk-prompts` at a
time (default: all in one chunk, one batch of episodes), each chunk appended with the
engine's random state to `progress_<side>.jsonl` in --out (evaluate/progress_file.py), so a
stopped evaluation rerun with the same options continues where it stopped and gives the
figures of an uninterrupted run with that chunk size.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from rlvr.cli.eval_defaults import REPO, recipe_source
from rlvr.errors import ConfigError

if TYPE_CHECKING:
    from rlvr.config import Config
    from rlvr.orchestrate.parts import ModelParts
    from rlvr.evaluate.evaluation import EvalOutput

SINGLE_TURN_ONLY = {"cot_judge": "--cot-judge", "prompt_field": "--prompt-field",
                    "answer_field": "--answer-field", "extra_fields": "--extra-fields",
                    "reward_function": "--reward-function"}


def add_episode_arguments(ev: argparse.ArgumentParser) -> None:
    env = ev.add_argument_group("environments", "a --recipe with [env] and no --task: each held-out task is "
                                "played --n times as an episode (docs/environments.md)")
    env.add_argument("--success-threshold", type=float, default=1.0, help="an episode succeeds when the "
                     "environment ended it with a terminal reward >= THRESHOLD (default 1.0)")


def episode_config(args: argparse.Namespace) -> "Config | None":
    """The recipe's config when this evaluation plays episodes (see the module), else None."""
    from rlvr.config import load_config

    if args.task is not None or args.samples is not None:
        return None
    config = load_config(recipe_source(args))
    return config if config.env.kind != "none" else None


def check_episode_args(args: argparse.Namespace, config: "Config") -> None:
    for dest, flag in SINGLE_TURN_ONLY.items():
        if getattr(args, dest, None) is not None:
            raise ConfigError(f"{flag} is for single-turn evaluation; the recipe ({recipe_source(args)}) plays "
                              f"episodes (env.kind = {config.env.kind!r}); give --task to evaluate single-turn")
    if args.limit is not None and args.limit < 1:
        raise ConfigError(f"--limit must be >= 1, got {args.limit}")
    if args.compare is not None and not Path(args.compare).is_dir():  # before the first model plays
        raise ConfigError(f"--compare {args.compare}: model folder not found")
    if not 0.0 <= args.success_threshold:
        raise ConfigError(f"--success-threshold must be >= 0, got {args.success_threshold}")
    if args.max_new_tokens >= config.env.max_total_tokens:
        raise ConfigError(f"--max-new-tokens {args.max_new_tokens} (one turn) must be below env.max_total_tokens "
                          f"({config.env.max_total_tokens}, the whole trajectory)")


def side_tasks(args: argparse.Namespace, config: "Config", path: str):
    """The tokenizer of the model at `path` (the recipe's template) and the held-out tasks."""
    from rlvr.cli.eval_args import tokenizer_folder
    from rlvr.cli.eval_datasets import engine_tokenizer
    from rlvr.orchestrate.components import load_task

    tokenizer = engine_tokenizer(tokenizer_folder(path, args.tokenizer), config.model.chat_template)
    return tokenizer, load_task(config, REPO, tokenizer)[1][:args.limit]


def load_parts(args: argparse.Namespace, config: "Config", path: str) -> "ModelParts":
    """The model at `path` in the recipe's engine seeded by args.seed, with the parts an
    environment is built from (the tokenizer with the recipe's template, the recipe's reward),
    from the recipe's plan as training builds them (orchestrate/model_parts.py)."""
    from rlvr.cli.eval_args import tokenizer_folder
    from rlvr.cli.eval_defaults import command_plan
    from rlvr.orchestrate.model_parts import load_model_parts

    parts = load_model_parts(command_plan(args, config), path, REPO, tokenizer_dir=tokenizer_folder(path, args.tokenizer))
    context = getattr(parts.model.config, "max_position_embeddings", None)
    if context is not None and config.env.max_total_tokens > context:
        raise ConfigError(f"env.max_total_tokens = {config.env.max_total_tokens} ({recipe_source(args)}) is above "
                          f"the context of {path} ({context} tokens)")
    return parts


def progress_settings(args: argparse.Namespace, config: "Config", path: str, tasks: int, n: int) -> dict:
    """What a partial evaluation in --out must have been asked with to be continued."""
    e = config.env
    return {"model": str(path), "defaults_from": str(recipe_source(args)), "env": e.kind, "tasks": tasks,
            "episodes_per_task": n, "limits": [e.max_turns, e.max_total_tokens, e.max_tool_calls, e.wall_s],
            "temperature": args.temperature, "max_new_tokens": args.max_new_tokens, "stop": list(args.stop),
            "seed": args.seed, "tokenizer": args.tokenizer, "chunk_prompts": args.chunk_prompts}


def play_side(args: argparse.Namespace, config: "Config", path: str, side: str, n: int, params) -> list:
    """n episodes of every held-out task on the model at `path`, chunk by chunk into
    `progress_<side>.jsonl`; chunks already there are not played again."""
    import torch

    from rlvr.evaluate.episodes_eval import TASK_CODEC
    from rlvr.evaluate.progress_file import Progress, run_chunks
    from rlvr.orchestrate.episode_eval import EpisodeEvaluator

    tokenizer, tasks = side_tasks(args, config, path)
    progress = Progress(args.out, side, progress_settings(args, config, path, len(tasks), n), TASK_CODEC)
    if len(progress.groups) == len(tasks):
        return progress.groups  # all done: not even the model is loaded
    if progress.groups:
        print(f"resuming {side}: {len(progress.groups)} of {len(tasks)} tasks done in {progress.path}")
    parts = load_parts(args, config, path)
    engine, evaluator = parts.engine, EpisodeEvaluator.from_config(config, parts)
    play = lambda part: evaluator.play(engine, part, n, params, args.seed,  # noqa: E731
                                       first=len(progress.groups), first_observation=True)
    get_rng = lambda: bytes(engine.generator.get_state().numpy().tobytes())  # noqa: E731
    set_rng = lambda state: engine.generator.set_state(  # noqa: E731
        torch.frombuffer(bytearray(state), dtype=torch.uint8))
    try:
        return run_chunks(tasks, args.chunk_prompts or len(tasks), progress, play, get_rng, set_rng)
    finally:
        evaluator.close()


def evaluate_episodes(args: argparse.Namespace, config: "Config") -> "EvalOutput":
    """Play, summarise and write the evaluation (results.json, disagreements.jsonl,
    episodes.jsonl, report.html, and with --compare their _compare twins, in args.out);
    nothing printed but a resumed side's progress."""
    from rlvr.cli.eval_args import parse_ks
    from rlvr.engines.base import SamplingParams
    from rlvr.evaluate.episodes_write import write_episode_evaluation
    from rlvr.evaluate.evaluation import EvalOutput

    check_episode_args(args, config)
    n = 1 if args.temperature == 0 else args.n  # greedy: every episode of a task would be the same
    ks = parse_ks(args.k, n)
    if ks[-1] > n:
        raise ConfigError(f"--k {ks[-1]} is larger than the {n} episode(s) per task"
                          + (" (temperature 0 is greedy: one episode a task)" if n == 1 else ""))
    if args.fresh:
        for side in ("model", "compare"):
            (args.out / f"progress_{side}.jsonl").unlink(missing_ok=True)
    params = SamplingParams(max_new_tokens=args.max_new_tokens, temperature=args.temperature, stop=args.stop)
    played = play_side(args, config, args.model, "model", n, params)
    other = play_side(args, config, args.compare, "compare", n, params) if args.compare else None
    e = config.env
    settings = {"model": args.model, "compare": args.compare, "defaults_from": str(recipe_source(args)),
                "env": e.kind, "task": config.task.kind, "tasks": len(played), "episodes_per_task": n, "k": list(ks),
                "temperature": args.temperature, "max_new_tokens": args.max_new_tokens, "seed": args.seed,
                "success_threshold": args.success_threshold, "chunk_prompts": args.chunk_prompts,
                "limits": {"max_turns": e.max_turns, "max_total_tokens": e.max_total_tokens,
                           "max_tool_calls": e.max_tool_calls, "wall_s": e.wall_s}}
    results = write_episode_evaluation(args.out, played, ks, settings, threshold=args.success_threshold,
                                       seed=args.seed, compare_with=other)
    return EvalOutput(args.out, results)


def print_episode_summary(output: "EvalOutput", seconds: float) -> None:
    from rlvr.evaluate.confidence import Estimate

    s, m = output.results["settings"], output.results["model"]
    n = m["episodes_per_task"]
    print(f"env {s['env']}: {m['tasks']} tasks x {n} episodes, {seconds:.1f} s  (95% CI over tasks)")
    print(f"  {'success@1':<10} {Estimate(m['success_at_1']['mean'], *m['success_at_1']['ci'])}")
    for k, entry in m["pass_at_k"].items():
        print(f"  {'pass@' + k:<10} {Estimate(entry['mean'], *entry['ci'])}")
    print(f"  successes out of {n}: " + ", ".join(f"{c}: {v}" for c, v in m["histogram"].items()) + " tasks")
    stops = ", ".join(f"{r} {share:.0%}" for r, share in m["stop_reasons"].items())
    print(f"  turns {m['turns_mean']:.2f}, tool calls {m['tool_calls_mean']:.2f} per episode; "
          f"{m['env_errors']} raised; stop reasons: {stops}")
    if "repo" in m:
        print_repo_summary(m["repo"])
    print(f"disagreements: {m['disagreements']} of {m['tasks']} tasks have episodes that succeed and fail, "
          f"ranked in {output.disagreements}")
    if "compare" in output.results:
        print_compare(output.results["compare"])
    print(f"results:  {output.results_file}\nepisodes: {output.folder / 'episodes.jsonl'}\nreport:   {output.report}")


def print_repo_summary(repo: dict) -> None:
    """The repository lines (rlvr.evaluate.repo_eval): resolved rate, tests, similarity, tampering."""
    from rlvr.evaluate.confidence import Estimate

    print(f"  {'resolved@1':<10} {Estimate(repo['resolved_at_1']['mean'], *repo['resolved_at_1']['ci'])}")
    for k, entry in repo["resolved_pass_at_k"].items():
        print(f"  {'resolved pass@' + k:<10} {Estimate(entry['mean'], *entry['ci'])}")
    similarity = "-" if repo["similarity_mean"] is None else f"{repo['similarity_mean']:.3f}"
    flags = ", ".join(f"{f} {share:.0%}" for f, share in repo["tampering"].items()) or "none"
    print(f"  listed tests passed {repo['tests_passed_share']:.1%}; patch similarity {similarity}; "
          f"tampering flags: {flags}")


def print_compare(compare: dict) -> None:
    from rlvr.evaluate.confidence import Estimate

    c, d = compare["model"], compare["diff"]
    print(f"compare: success@1 {Estimate(c['success_at_1']['mean'], *c['success_at_1']['ci'])}")
    entries = [("success@1", d["success_at_1_diff"])] + [(f"pass@{k}", v) for k, v in d["pass_at_k_diff"].items()]
    for name, entry in entries:
        print(f"  diff {name:<10} {Estimate(entry['mean'], *entry['ci'])}  (compare - model, paired over tasks)")
    ch = d["changes"]
    print(f"  tasks solved {ch['solved']}, lost {ch['lost']}, better {ch['better']}, worse {ch['worse']}")
