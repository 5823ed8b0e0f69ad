"""`rlvr eval --task datasets:PATH` (or `--task datasets`): evaluate on the files training reads
with `task.kind = "datasets"` (rlvr.tasks.files), prompts given as chat messages rendered with
the model's chat template.

    --task datasets:PATH   every row of PATH (jsonl, json, parquet, arrow, csv)
    --task datasets        the test split of the recipe's [task] section (its task.test_path, or
                           the same task.test_fraction rows, drawn with task.seed, that training
                           held out)

The columns are `--prompt-field`, `--answer-field`, `--extra-fields` where given, else the
recipe's [task] section when its kind is "datasets", else prompt / answer / none. The template
is `--chat-template auto|none|FILE`, else the recipe's `model.chat_template`. The scorer is
`--reward-function package.module:function`, else the recipe's `reward.function`, else the math
verifier; a function receives the row's extra columns by parameter name, as in training
(rlvr.rewards.calling). Which recipe: the one `rlvr eval` takes its sampling defaults from
(cli/eval_defaults.py).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from rlvr.cli.eval_defaults import REPO, recipe_source
from rlvr.errors import ConfigError

if TYPE_CHECKING:
    from rlvr.config import Config
    from rlvr.types import Sample

PREFIX = "datasets"


def is_datasets_task(task: str) -> bool:
    return task == PREFIX or task.startswith(PREFIX + ":")


def add_dataset_arguments(ev: argparse.ArgumentParser) -> None:
    ds = ev.add_argument_group("datasets files", "--task datasets:PATH or --task datasets (the recipe's "
                               "[task] test split); see docs/evaluation.md")
    ds.add_argument("--prompt-field", help="the prompt column: text or chat messages (default: the recipe's "
                    "task.prompt_field for a datasets task, else 'prompt')")
    ds.add_argument("--answer-field", help="the gold column (default: the recipe's, else 'answer')")
    ds.add_argument("--extra-fields", help="comma-separated columns handed to the reward function by "
                    "parameter name (default: the recipe's task.extra_fields)")
    ds.add_argument("--chat-template", metavar="auto|none|FILE", help="how messages prompts are rendered "
                    "(default: the recipe's model.chat_template, else auto: the tokenizer's own)")
    ds.add_argument("--reward-function", metavar="package.module:function", help="score with this function "
                    "(default: the recipe's reward.function for a datasets task, else the math verifier)")


def recipe_config(args: argparse.Namespace) -> "Config":
    from rlvr.config import load_config

    return load_config(recipe_source(args))


def chat_template_setting(args: argparse.Namespace, config: "Config") -> str:
    return args.chat_template if args.chat_template is not None else config.model.chat_template


def dataset_section(args: argparse.Namespace, config: "Config"):
    """The [task] section --task names, with the column flags laid over the recipe's."""
    from rlvr.config.schema import task_section

    own = config.task if config.task.kind == "datasets" else None
    path = args.task.removeprefix(PREFIX).removeprefix(":")
    if not path and own is None:
        raise ConfigError(f"--task datasets: the recipe ({recipe_source(args)}) has task.kind = "
                          f"{config.task.kind!r}; give --task datasets:PATH or a --recipe whose task.kind = 'datasets'")
    fields = {"prompt_field": args.prompt_field or (own.prompt_field if own else "prompt"),
              "answer_field": args.answer_field or (own.answer_field if own else "answer"),
              "extra_fields": (_names(args.extra_fields) if args.extra_fields is not None
                               else list(own.extra_fields) if own else [])}
    if path:  # the whole file is the evaluation set
        return task_section(kind="datasets", train_path=path, **fields)
    keep = {k: getattr(own, k) for k in ("train_path", "test_path", "test_fraction", "seed")}
    return task_section(kind="datasets", **keep, **fields)


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def load_dataset_prompts(args: argparse.Namespace, tokenizer_dir: Callable[[], str]) -> list["Sample"]:
    """The rows --task names as Samples, messages rendered with the template; `tokenizer_dir()`
    is the folder the tokenizer is read from (called on the first messages prompt only)."""
    from rlvr.tasks.chat import renderer
    from rlvr.tasks.files import dataset_splits

    config = recipe_config(args)
    section = dataset_section(args, config)
    setting = chat_template_setting(args, config)
    render = renderer(setting, lambda: engine_tokenizer(tokenizer_dir(), setting))
    if args.task == PREFIX and not (section.test_path or section.test_fraction is not None):
        raise ConfigError(f"--task datasets: the recipe ({recipe_source(args)}) has no test split (task.test_path or "
                          f"task.test_fraction); give --task datasets:PATH to evaluate a file's rows")
    train, test = dataset_splits(section, _resolve, render)
    return train if args.task != PREFIX else test  # datasets:PATH: every row of the file


def _resolve(path: str) -> Path:
    """As training reads a recipe's path: from the working directory, else from the repo."""
    p = Path(path)
    return p if p.is_absolute() or p.exists() else REPO / p


def engine_tokenizer(folder: str, setting: str):
    """The tokenizer with `setting`'s template: the one prompts are rendered with and whose
    end-of-turn token the engine stops on."""
    from rlvr.engines.loading import load_tokenizer
    from rlvr.tasks.chat import with_chat_template

    return with_chat_template(load_tokenizer(folder), setting, REPO)


def reward_function(args: argparse.Namespace) -> Callable | None:
    """--reward-function's function, else the recipe's reward.function (datasets tasks only)."""
    from rlvr.function_spec import import_function

    if args.reward_function:
        return import_function(args.reward_function, f"--reward-function {args.reward_function}")
    if not is_datasets_task(args.task):
        return None
    spec = recipe_config(args).reward.function
    return import_function(spec, f"reward.function = {spec!r} ({recipe_source(args)})") if spec else None
