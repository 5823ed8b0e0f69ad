"""`rlvr eval`: group-relative evaluation of a model (or of a jsonl of samples)."""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from rlvr.cli.eval_args import parse_ks, tokenizer_folder
from rlvr.cli.eval_datasets import add_dataset_arguments, is_datasets_task
from rlvr.cli.eval_defaults import fill_defaults
from rlvr.cli.eval_episodes import add_episode_arguments, episode_config
from rlvr.errors import ConfigError, DatasetError

if TYPE_CHECKING:  # the heavy imports (torch, matplotlib) wait until the command runs
    from rlvr.evaluate.evaluation import EvalOutput
    from rlvr.evaluate.groups import PromptGroup
    from rlvr.config.schema import TaskSection
    from rlvr.rewards import MathVerifier
    from rlvr.types import Sample

DEFAULT_TASK = "arithmetic"
HELP = "pass@k, maj@k, best-of-n, disagreements and a report for a model or a jsonl of samples"


def add_parser(sub: argparse._SubParsersAction) -> None:
    ev = sub.add_parser("eval", help=HELP, description=HELP + ". See docs/evaluation.md.")
    ev.add_argument("model", nargs="?", help="model folder (omit with --samples)")
    ev.add_argument("--task", help="a task kind with its default settings ('arithmetic', the default "
                    "unless the --recipe has [env]: the demo's test split; 'humaneval': 164 problems, scored by "
                    "the code verifier, also for --samples; 'reasoning_gym'), jsonl:PATH, datasets:PATH (a "
                    "parquet/arrow/csv/json(l) file, chat-message prompts allowed) or datasets (the --recipe's "
                    "[task] test split); omitted with a --recipe (or run) that has [env]: its test split played "
                    "as episodes")
    ev.add_argument("--limit", type=int, help="evaluate only the first LIMIT prompts")
    ev.add_argument("--n", type=int, default=16, help="samples per prompt (default 16)")
    ev.add_argument("--k", help="comma-separated k values (default: powers of 2 up to n)")
    ev.add_argument("--temperature", type=float, help="default: the recipe's eval.temperature")
    ev.add_argument("--max-new-tokens", type=int, help="default: the recipe's eval.max_new_tokens (the trainer's)")
    ev.add_argument("--recipe", metavar="NAME_OR_FILE", help="where the sampling defaults come from (default: the "
                    "run's config.toml for a checkpoint in a run folder, else the demo recipe)")
    ev.add_argument("--chunk-prompts", type=int, metavar="P", help="prompts sampled per chunk; each chunk is saved, "
                    "so a stopped eval resumes with the same --out (default: one engine batch; episodes: all tasks)")
    ev.add_argument("--fresh", action="store_true", help="discard a partial evaluation in --out and start over")
    ev.add_argument("--seed", type=int, default=0, help="sampling seed (both models use it)")
    ev.add_argument("--out", type=Path, default=Path("eval-results"), help="output folder")
    ev.add_argument("--compare", metavar="OTHER", help="a second model folder (or, with --samples, a "
                    "second samples file) on the same prompts and seeds; differences are OTHER - MODEL")
    ev.add_argument("--tokenizer", metavar="DIR", help="tokenizer folder for both models (default: each model's "
                    "own; a run's checkpoints/step_N holds the run's, one from before 2026-12-01 none: then the base model's)")
    ev.add_argument("--samples", type=Path, metavar="FILE.jsonl",
                    help='score already generated {"prompt","response","gold"} rows instead of sampling')
    add_dataset_arguments(ev)
    add_cot_arguments(ev)
    add_episode_arguments(ev)


def add_cot_arguments(ev: argparse.ArgumentParser) -> None:
    cot = ev.add_argument_group("CoT-pass@k", "a sample counts only when its answer is right and a judge finds its "
                                "reasoning right (Wen et al. 2025); reported beside pass@k")
    cot.add_argument("--cot-judge", metavar="SPEC", help="the reasoning judge: function:package.module:function "
                     "(fn(prompt, reasoning, question, reference) -> P(right)), model:DIR or http:URL (a GenRM "
                     "judge), reward:package.module:function, rubric:RECIPE.toml (its [reward] rubric), "
                     "rules:RECIPE.toml, recipe:RECIPE.toml (its [reward.judge]), any|all|majority:SPEC + SPEC "
                     "(several judges), or samples[:RULE] (the --samples file's cot_p); resumes after a stop")
    cot.add_argument("--cot-threshold", type=float, default=0.5, help="reasoning right when P >= THRESHOLD (0.5)")
    cot.add_argument("--cot-question", help="the question put to the judge (default: cot_judge.COT_QUESTION)")
    cot.add_argument("--cot-judge-samples", type=int, default=1, help="GenRM: k judge samples, P is their mean")
    cot.add_argument("--cot-judge-max-new-tokens", type=int, default=0, help="GenRM: reasoning tokens before "
                     "its yes/no (default 0)")
    cot.add_argument("--cot-judge-temperature", type=float, default=1.0, help="GenRM: its sampling temperature")
    cot.add_argument("--cot-judge-top", type=int, default=20, help="GenRM: next tokens its verdict reads (20)")
    cot.add_argument("--cot-served-model", metavar="NAME", help="http: the judge model's name on the server")


EPISODE_ONLY_TASKS = ("textarena", "repo")  # tasks only an [env] plays (coherence_env.py)


def task_section(task: str) -> "TaskSection":
    """--task KIND (a task kind with its default settings: arithmetic is the demo's test split)
    or jsonl:PATH, as the [task] section training would read."""
    from rlvr.config.schema import task_section as section
    from rlvr.tasks.registry import TASKS

    if task.startswith("jsonl:"):
        return section(kind="jsonl", test_path=task.removeprefix("jsonl:"))
    file_kinds = ("jsonl", "datasets")  # a file's kind: jsonl:PATH (datasets files: not yet in eval)
    if task in EPISODE_ONLY_TASKS:  # its rows are game seeds: a single-turn score means nothing
        raise ConfigError(f"--task {task!r}: these tasks are played as episodes; give --recipe with its [env] "
                          "section and no --task (docs/environments.md, Evaluation on environments)")
    if task not in TASKS or task in file_kinds:
        offered = (k for k in TASKS if k not in file_kinds and k not in EPISODE_ONLY_TASKS)
        raise ConfigError(f"--task {task!r}: expected one of {', '.join(offered)} "
                          "or jsonl:PATH (or datasets:PATH, or datasets: the --recipe's test split)")
    return section(kind=task)


def load_prompts(task: str, limit: int | None) -> list[Sample]:
    """The test split of --task (see `task_section`), through the task registry training uses."""
    from rlvr.tasks.registry import load_splits

    samples = load_splits(task_section(task))[1]
    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be >= 1, got {limit}")
    return samples[:limit]


def load_any_prompts(args: argparse.Namespace) -> list[Sample]:
    """--task's prompts: a datasets file through cli/eval_datasets.py, the others `load_prompts`."""
    if not is_datasets_task(args.task):
        return load_prompts(args.task, args.limit)
    from rlvr.cli.eval_datasets import load_dataset_prompts

    if args.limit is not None and args.limit < 1:
        raise ConfigError(f"--limit must be >= 1, got {args.limit}")
    return load_dataset_prompts(args, lambda: tokenizer_folder(args.model, args.tokenizer))[:args.limit]


def sample_model(path: str, samples: list[Sample], args: argparse.Namespace, verifier: MathVerifier,
                 side: str) -> list[PromptGroup]:
    """Sample args.n completions per prompt from the model at `path`, seeded by args.seed, chunk
    by chunk into `progress_<side>.jsonl`; prompts already done there are skipped."""
    from rlvr.evaluate.progress_file import Progress, run_chunks

    keys = ("task", "limit", "n", "temperature", "max_new_tokens", "seed", "tokenizer", "chunk_prompts",
            "chat_template", "prompt_field", "answer_field", "extra_fields", "reward_function", "recipe")
    settings = {"model": str(path), "prompts": len(samples), **{k: getattr(args, k) for k in keys},
                "stop": list(args.stop)}
    progress = Progress(args.out, side, settings)
    if len(progress.groups) == len(samples):
        return progress.groups  # all done: not even the model is loaded
    if progress.groups:
        print(f"resuming {side}: {len(progress.groups)} of {len(samples)} prompts done in {progress.path}")
    engine, params = load_engine(path, samples, args)
    chunk = args.chunk_prompts or max(1, engine.max_batch // args.n)
    how = reward_concurrency(args)

    def sample(part):
        from rlvr.evaluate.evaluation import sample_groups

        # A reward function is called itself (not through TaskScorer) so that it gets the extra columns.
        score = verifier.verify if isinstance(verifier, TaskScorer) else verifier
        return sample_groups(engine, part, args.n, params, score, verifier.extract, how)

    def set_rng(state: bytes) -> None:
        import torch

        engine.generator.set_state(torch.frombuffer(bytearray(state), dtype=torch.uint8))

    get_rng = lambda: bytes(engine.generator.get_state().numpy().tobytes())  # noqa: E731
    return run_chunks(samples, chunk, progress, sample, get_rng, set_rng)


def reward_concurrency(args: argparse.Namespace):
    """The recipe's `reward.score_workers` / `score_pool` / `call_timeout_s`, as training uses them."""
    from rlvr.cli.eval_defaults import recipe_source
    from rlvr.config import load_config
    from rlvr.orchestrate.scoring import concurrency_of

    return concurrency_of(load_config(recipe_source(args)).reward)


def load_engine(path: str, samples: list[Sample], args: argparse.Namespace):
    """The model at `path` in the recipe's engine (its plan: `command_plan`), seeded by
    args.seed → (engine, SamplingParams)."""
    from rlvr.cli.eval_defaults import REPO, command_plan
    from rlvr.engines import SamplingParams
    from rlvr.orchestrate.components import check_prompt_lengths
    from rlvr.orchestrate.model_parts import load_model_parts

    # With the template prompts were rendered with: the engine stops on its end-of-turn token.
    parts = load_model_parts(command_plan(args, chat_template=args.chat_template), path, REPO, tokenizer_dir=tokenizer_folder(path, args.tokenizer),
                             with_reward=False)  # scored by the --task's verifier
    tokenizer = parts.tokenizer
    check_prompt_lengths(samples, tokenizer, getattr(parts.model.config, "max_position_embeddings", None),
                         args.max_new_tokens)
    for s in samples:
        if not tokenizer(s.prompt, add_special_tokens=False)["input_ids"]:
            raise DatasetError(f"{s.source}: the prompt is empty after tokenisation")
    params = SamplingParams(max_new_tokens=args.max_new_tokens, temperature=args.temperature, stop=args.stop)
    return parts.engine, params


def check_args(args: argparse.Namespace) -> None:
    if args.samples is None and args.model is None:
        raise ConfigError("rlvr eval needs a MODEL_PATH or --samples FILE.jsonl")
    if args.samples is not None and args.model is not None:
        raise ConfigError("give either a MODEL_PATH or --samples FILE.jsonl, not both")
    if args.n < 1:
        raise ConfigError(f"--n must be >= 1, got {args.n}")
    if args.max_new_tokens is not None and args.max_new_tokens < 1:
        raise ConfigError(f"--max-new-tokens must be >= 1, got {args.max_new_tokens}")
    if args.temperature is not None and args.temperature < 0:
        raise ConfigError(f"--temperature must be >= 0, got {args.temperature}")
    if args.chunk_prompts is not None and args.chunk_prompts < 1:
        raise ConfigError(f"--chunk-prompts must be >= 1, got {args.chunk_prompts}")
    if not 0.0 <= args.cot_threshold <= 1.0:
        raise ConfigError(f"--cot-threshold must be in [0, 1], got {args.cot_threshold}")
    if args.cot_judge == "samples" and args.samples is None:
        raise ConfigError("--cot-judge samples reads the cot_p column of a --samples file; give --samples FILE.jsonl")


def collect(args: argparse.Namespace,
            verifier: MathVerifier) -> tuple[list[PromptGroup], list[PromptGroup] | None, tuple[int, ...], dict]:
    """The graded groups of the model (and of --compare), the k values and the settings."""
    from rlvr.evaluate.compare import align_by_prompt
    from rlvr.evaluate.samples_file import load_samples

    if args.samples is not None:
        groups = load_samples(args.samples, verifier, verifier.extract)
        other = load_samples(args.compare, verifier, verifier.extract) if args.compare else None
        other = align_by_prompt(groups, other) if other is not None else None
        ks = parse_ks(args.k, min(g.n for g in groups + (other or [])))
        return groups, other, ks, {"samples": str(args.samples), "compare": args.compare}
    ks = parse_ks(args.k, args.n)
    if ks[-1] > args.n:
        raise ConfigError(f"--k {ks[-1]} is larger than --n {args.n}: pass@k needs n >= k samples")
    recipe = fill_defaults(args)
    prompts = load_any_prompts(args)
    if args.fresh:
        for side in ("model", "compare"):
            (args.out / f"progress_{side}.jsonl").unlink(missing_ok=True)
    groups = sample_model(args.model, prompts, args, verifier, "model")
    other = sample_model(args.compare, prompts, args, verifier, "compare") if args.compare else None
    settings = {"model": args.model, "compare": args.compare, "task": args.task, "prompts": len(prompts),
                "n": args.n, "temperature": args.temperature, "max_new_tokens": args.max_new_tokens,
                "seed": args.seed, "defaults_from": recipe}
    return groups, other, ks, settings


def print_summary(output: EvalOutput, seconds: float) -> None:
    from rlvr.evaluate.confidence import Estimate
    from rlvr.evaluate.summary import estimate

    results = output.results
    model = results["model"]
    print(f"{model['prompts']} prompts, {model['samples']} samples, {seconds:.1f} s  (95% CI over prompts)")
    sides = [("", model)] + ([("compare ", results["compare"]["model"])] if "compare" in results else [])
    for prefix, result in sides:
        for metric in ("pass_at_k", "maj_at_k"):
            for k in result[metric]:
                print(f"  {prefix}{metric.split('_')[0] + '@' + k:<8} {estimate(result, metric, int(k))}")
        if result["best_of_n"]["logprob"] is not None:
            best = estimate(result["best_of_n"], "logprob")
            print(f"  {prefix}best-of-{result['best_of_n']['n']} by log-prob {best}")
    if "compare" in results:
        diff = results["compare"]["diff"]
        for k, entry in diff["pass_at_k_diff"].items():
            print(f"  diff {'pass@' + k:<8} {Estimate(entry['mean'], *entry['ci'])}  (compare - model, paired)")
        ch = diff["changes"]
        print(f"  prompts solved {ch['solved']}, lost {ch['lost']}, better {ch['better']}, worse {ch['worse']}")
    print(f"disagreements: {model['disagreements']} of {model['prompts']} prompts have mixed verdicts, ranked in "
          f"{output.disagreements} ({model['scattered_prompts']} more agree on the verdict but scatter their "
          f"answers; not listed)")


@dataclass(frozen=True)
class TaskScorer:
    """A task's verifier, and the answer extractors that maj@k votes with (none for code)."""

    verify: Callable
    extract: tuple[str, ...]

    def __call__(self, response: str, gold: str):
        return self.verify(response=response, gold=gold)


def task_scorer(args: argparse.Namespace) -> "MathVerifier | TaskScorer":
    """The verifier --task's kind is scored with (tasks/registry.py): the code verifier
    (sandboxed, default limits) for humaneval, the math verifier otherwise; a reward function
    (--reward-function, or a datasets task's reward.function) replaces it, voting on the math
    verifier's extracted answers."""
    from rlvr.cli.eval_datasets import reward_function
    from rlvr.rewards import CodeVerifier, MathVerifier
    from rlvr.tasks.registry import TASKS

    if (fn := reward_function(args)) is not None:
        return TaskScorer(fn, extract=MathVerifier().extract)
    if is_datasets_task(args.task):
        return MathVerifier()
    if TASKS[task_section(args.task).kind].scorer == "code":
        return TaskScorer(CodeVerifier(), extract=())
    return MathVerifier()


def evaluate_args(args: argparse.Namespace) -> "EvalOutput":
    """The whole evaluation of `rlvr eval ARGS`, its files written to args.out, nothing printed
    (also `rlvr.eval_model`, cli/eval_api.py)."""
    from rlvr.cli.eval_cot import cot_input, make_cot_ask
    from rlvr.evaluate.evaluation import write_evaluation

    check_args(args)
    if (config := episode_config(args)) is not None:  # the recipe has [env]: play episodes
        from rlvr.cli.eval_episodes import evaluate_episodes

        fill_defaults(args)
        return evaluate_episodes(args, config)
    if args.task is None:
        args.task = DEFAULT_TASK
    verifier = task_scorer(args)
    ask = make_cot_ask(args.cot_judge, args) if args.cot_judge else None  # a bad spec fails before sampling
    groups, other, ks, settings = collect(args, verifier)
    cot = cot_input(args, ask, groups, other) if args.cot_judge else None
    return write_evaluation(args.out, groups, ks, {**settings, "k": list(ks)}, compare_with=other, seed=args.seed,
                            cot=cot)


def run_eval(args: argparse.Namespace) -> int:
    from rlvr.cli.eval_cot import print_cot

    start = time.perf_counter()
    output = evaluate_args(args)
    if "env" in output.results["settings"]:  # episodes (cli/eval_episodes.py)
        from rlvr.cli.eval_episodes import print_episode_summary

        print_episode_summary(output, time.perf_counter() - start)
        return 0
    print_summary(output, time.perf_counter() - start)
    if args.cot_judge:
        print_cot(output.results)
        print(f"judgements: {output.folder / 'cot_judgements.jsonl'}")
    print(f"results: {output.results_file}\nreport:  {output.report}")
    return 0
