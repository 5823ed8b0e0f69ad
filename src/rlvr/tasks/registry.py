"""Task kind -> how to load its (train, test) splits: the one dispatcher that training
(`load_task`) and `rlvr eval --task` share. The kinds are rlvr/names.py's TASK_KIND.

A loader takes the [task] section, a `resolve` that turns a recipe's relative path into a
file (training reads it from the working directory, else the repo), and a `render` that turns
chat messages into the prompt text (rlvr.tasks.chat; None: messages are refused). The rules on a task's
settings (and on which verifier may score it) ran at load: config/coherence.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Literal, Optional

from rlvr import names

if TYPE_CHECKING:
    from rlvr.config.schema import TaskSection
    from rlvr.types import Sample

Splits = tuple[list["Sample"], list["Sample"]]
Resolve = Callable[[str], Path]


@dataclass(frozen=True)
class TaskKind:
    load: Callable[["TaskSection", Resolve, Optional[Callable]], Splits]
    scorer: Literal["math", "code"]  # the verifier `rlvr eval --task KIND` scores with


def _arithmetic(t: TaskSection, resolve: Resolve, render=None) -> Splits:
    from rlvr.tasks.arithmetic import arithmetic_splits

    return arithmetic_splits(seed=t.seed, test_size=t.test_size, low=t.low, high=t.high, ops=t.ops)


def _jsonl(t: TaskSection, resolve: Resolve, render=None) -> Splits:
    from rlvr.tasks.jsonl import load_jsonl

    train = load_jsonl(resolve(t.train_path)) if t.train_path else []
    test = load_jsonl(resolve(t.test_path)) if t.test_path else []
    return train, test


def _humaneval(t: TaskSection, resolve: Resolve, render=None) -> Splits:
    from rlvr.tasks.humaneval import humaneval_splits

    return humaneval_splits()  # ([], all 164): config/coherence.py refuses to train on it


def _reasoning_gym(t: TaskSection, resolve: Resolve, render=None) -> Splits:
    from rlvr.tasks.reasoning_gym import gym_splits  # imports reasoning-gym (~1 s) only when asked

    return gym_splits(t.gym_tasks, size=t.gym_size, seed=t.seed, test_size=t.test_size)


def _datasets(t: TaskSection, resolve: Resolve, render=None) -> Splits:
    from rlvr.tasks.chat import renderer
    from rlvr.tasks.files import dataset_splits  # imports `datasets` (~1 s) only when asked

    return dataset_splits(t, resolve, render or renderer("none", lambda: None))


def _guess_number(t: TaskSection, resolve: Resolve, render=None) -> Splits:
    from rlvr.tasks.guess_number import guess_number_splits

    return guess_number_splits(seed=t.seed, train_size=t.train_size, test_size=t.test_size, low=t.low, high=t.high)


def _textarena(t: TaskSection, resolve: Resolve, render=None) -> Splits:
    from rlvr.tasks.game_seeds import game_seed_splits

    return game_seed_splits(seed=t.seed, train_size=t.train_size, test_size=t.test_size, name="textarena")


def _repo(t: TaskSection, resolve: Resolve, render=None) -> Splits:
    from rlvr.tasks.repo_tasks import repo_paths, repo_samples

    train, test = repo_paths(t.train_path, t.test_path, resolve)
    return repo_samples(train, t.train_size), repo_samples(test, t.test_size)


TASKS: dict[str, TaskKind] = names.TASK_KIND.bind({
    "arithmetic": TaskKind(_arithmetic, scorer="math"),
    "jsonl": TaskKind(_jsonl, scorer="math"),
    "humaneval": TaskKind(_humaneval, scorer="code"),
    "reasoning_gym": TaskKind(_reasoning_gym, scorer="math"),  # eval: the default, numeric generator
    "datasets": TaskKind(_datasets, scorer="math"),
    "guess_number": TaskKind(_guess_number, scorer="math"),  # single-turn: the first guess
    "textarena": TaskKind(_textarena, scorer="math"),  # only env.kind = "textarena" plays it (coherence_env.py)
    "repo": TaskKind(_repo, scorer="math"),  # only env.kind = "repo" plays it (coherence_env.py)
}, table="TASKS")


def load_splits(t: TaskSection, resolve: Resolve = Path, render=None) -> Splits:
    """(train, test) of the task the [task] section describes."""
    return TASKS[t.kind].load(t, resolve, render)
