"""`rlvr eval MODEL --recipe ENV_RECIPE`: evaluation on environments (docs/environments.md,
"Evaluation on environments").

When the recipe `rlvr eval` takes its defaults from (cli/eval_defaults.py: `--recipe`, else the
run's config.toml for a checkpoint in a run folder) has an [env] section (env.kind other than
"none") and no `--task` is given, every held-out task of the recipe's [task] test split (the
first `--limit`) is played `--n` times as an episode of that environment, with its limits,
through the run's `EpisodeRunner` (orchestrate/episode_eval.py). A turn samples at most
`--max-new-tokens` (the recipe's eval.max_new_tokens) at `--temperature` (eval.temperature);
temperature 0 is greedy, so one episode a task. Summaries: rlvr.evaluate.episodes_eval.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING

from rlvr.cli.eval_defaults import REPO, recipe_source
from rlvr.errors import ConfigError

if TYPE_CHECKING:
    from rlvr.config import Config
    from rlvr.evaluate.evaluation import EvalOutput

SINGLE_TURN_ONLY = {"compare": "--compare", "cot_judge": "--cot-judge",
                    "chunk_prompts": "--chunk-prompts", "prompt_field": "--prompt-field",
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
    if not 0.0 <= args.success_threshold:
        raise ConfigError(f"--success-threshold must be >= 0, got {args.success_threshold}")
    if args.max_new_tokens >= config.env.max_total_tokens:
        raise ConfigError(f"--max-new-tokens {args.max_new_tokens} (one turn) must be below env.max_total_tokens "
                          f"({config.env.max_total_tokens}, the whole trajectory)")


def load_parts(args: argparse.Namespace, config: "Config"):
    """The model at args.model in an HFEngine seeded by args.seed, its tokenizer (the recipe's
    template), the recipe's reward, and the held-out tasks."""
    from rlvr.cli.eval_command import tokenizer_folder
    from rlvr.cli.eval_datasets import engine_tokenizer
    from rlvr.engines import HFEngine
    from rlvr.engines.loading import load_model
    from rlvr.orchestrate.components import judge_path_resolved, load_task
    from rlvr.orchestrate.scoring import build_reward_fn
    from rlvr.train.lora import is_adapter_checkpoint, load_merged

    tokenizer = engine_tokenizer(tokenizer_folder(args.model, args.tokenizer), config.model.chat_template)
    tasks = load_task(config, REPO, tokenizer)[1]
    path = Path(args.model)
    model = load_merged(path, load_model) if is_adapter_checkpoint(path) else load_model(args.model)  # LoRA: merged
    context = getattr(model.config, "max_position_embeddings", None)
    if context is not None and config.env.max_total_tokens > context:
        raise ConfigError(f"env.max_total_tokens = {config.env.max_total_tokens} ({recipe_source(args)}) is above "
                          f"the context of {args.model} ({context} tokens)")
    reward_fn = build_reward_fn(judge_path_resolved(config.reward, REPO), (model, tokenizer))
    return HFEngine(model, tokenizer, seed=args.seed), SimpleNamespace(tokenizer=tokenizer, reward_fn=reward_fn), \
        tasks[:args.limit]


def evaluate_episodes(args: argparse.Namespace, config: "Config") -> "EvalOutput":
    """Play, summarise and write the evaluation (results.json, disagreements.jsonl,
    episodes.jsonl in args.out); nothing printed."""
    from rlvr.cli.eval_command import parse_ks
    from rlvr.engines.base import SamplingParams
    from rlvr.evaluate.episodes_eval import write_episode_evaluation
    from rlvr.evaluate.evaluation import EvalOutput
    from rlvr.orchestrate.episode_eval import EpisodeEvaluator

    check_episode_args(args, config)
    n = 1 if args.temperature == 0 else args.n  # greedy: every episode of a task would be the same
    ks = parse_ks(args.k, n)
    if ks[-1] > n:
        raise ConfigError(f"--k {ks[-1]} is larger than the {n} episode(s) per task"
                          + (" (temperature 0 is greedy: one episode a task)" if n == 1 else ""))
    engine, parts, tasks = load_parts(args, config)
    evaluator = EpisodeEvaluator.from_config(config, parts)
    params = SamplingParams(max_new_tokens=args.max_new_tokens, temperature=args.temperature, stop=args.stop)
    try:
        played = evaluator.play(engine, tasks, n, params, args.seed)
    finally:
        evaluator.close()
    e = config.env
    settings = {"model": args.model, "defaults_from": str(recipe_source(args)), "env": e.kind,
                "task": config.task.kind, "tasks": len(tasks), "episodes_per_task": n, "k": list(ks),
                "temperature": args.temperature, "max_new_tokens": args.max_new_tokens, "seed": args.seed,
                "success_threshold": args.success_threshold,
                "limits": {"max_turns": e.max_turns, "max_total_tokens": e.max_total_tokens,
                           "max_tool_calls": e.max_tool_calls, "wall_s": e.wall_s}}
    results = write_episode_evaluation(args.out, played, ks, settings, threshold=args.success_threshold,
                                       seed=args.seed)
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
    print(f"disagreements: {m['disagreements']} of {m['tasks']} tasks have episodes that succeed and fail, "
          f"ranked in {output.disagreements}")
    print(f"results:  {output.results_file}\nepisodes: {output.folder / 'episodes.jsonl'}")


def run_episode_eval(args: argparse.Namespace, config: "Config") -> int:
    start = time.perf_counter()
    output = evaluate_episodes(args, config)
    print_episode_summary(output, time.perf_counter() - start)
    return 0
