"""`task.kind = "datasets"`: local files read with the Hugging Face `datasets` library.

The format follows the file's extension: .jsonl / .json (the `json` builder), .parquet, .arrow,
.csv. Only local files are read; a path that does not exist is an error, never a hub name.

Each row becomes a `Sample`:

    prompt  <- column task.prompt_field: text, or a list of chat messages rendered with the
               tokenizer's chat template (rlvr.tasks.chat)
    answer  <- column task.answer_field: a string or a number (as its text)
    extra   <- the columns task.extra_fields, as the file holds them; a reward function that
               names one as a parameter gets its value (rewards/calling.py)
    source  <- "<file> row <i>", i counted from 0 as `dataset[i]`

Every malformed row fails with one line naming the file, the row and the column; nothing is
skipped. The test split is task.test_path, or a task.test_fraction share of train_path's rows
drawn with task.seed, or empty.
"""

from __future__ import annotations

import difflib
import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from rlvr.errors import ConfigError, DatasetError
from rlvr.tasks.chat import check_messages
from rlvr.types import Sample

FORMATS = {".jsonl": "json", ".json": "json", ".parquet": "parquet", ".arrow": "arrow", ".csv": "csv"}
# Keywords the reward call already uses: an extra column of that name would be ambiguous.
RESERVED = ("response", "gold", "prompt")
Render = Callable[[list[dict[str, str]], str], str]  # (messages, where) -> prompt text


@dataclass(frozen=True)
class Columns:
    prompt: str = "prompt"
    answer: str = "answer"
    extra: tuple[str, ...] = ()

    def check(self) -> None:
        clash = [c for c in self.extra if c in RESERVED or c in (self.prompt, self.answer)]
        if clash:
            raise ConfigError(f"task.extra_fields: {clash[0]!r} is the prompt or answer column or a reward "
                              f"keyword ({', '.join(RESERVED)}); rename the column")


def read_table(path: Path):
    """The file as a `datasets.Dataset`; DatasetError naming the file otherwise."""
    builder = FORMATS.get(path.suffix.lower())
    if builder is None:
        raise DatasetError(f"{path}: unknown dataset format {path.suffix!r} (use one of {', '.join(FORMATS)})")
    if not path.is_file():
        raise DatasetError(f"{path}: dataset file not found")
    try:
        import datasets
    except ImportError:
        raise DatasetError("task.kind = 'datasets' needs the datasets package: pip install datasets") from None
    datasets.disable_progress_bars()
    try:
        return datasets.load_dataset(builder, data_files=str(path), split="train")
    except Exception as e:  # pyarrow, pandas and datasets raise many types; each is one line here
        raise DatasetError(f"{path}: cannot read it as {builder} ({_first_line(e)})") from None


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    cause = e.__cause__ or e.__context__  # DatasetGenerationError hides pyarrow's reason here
    if cause is not None and str(cause).strip():
        text = f"{text}: {str(cause).strip()}" if text else str(cause).strip()
    return text.splitlines()[0] if text else type(e).__name__


def check_columns(path: Path, names: list[str], columns: Columns) -> None:
    for field, column in (("task.prompt_field", columns.prompt), ("task.answer_field", columns.answer),
                          *(("task.extra_fields", c) for c in columns.extra)):
        if column not in names:
            close = difflib.get_close_matches(column, names, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise DatasetError(f"{path}: no column {column!r} ({field}){hint}; its columns: {', '.join(names)}")


def load_file(path: str | Path, columns: Columns, render: Render) -> list[Sample]:
    """The rows of one file as Samples (see the module docstring)."""
    path = Path(path)
    columns.check()
    table = read_table(path)
    check_columns(path, list(table.column_names), columns)
    if len(table) == 0:
        raise DatasetError(f"{path}: dataset is empty (no rows)")
    wanted = [columns.prompt, columns.answer, *columns.extra]
    return [parse_row(row, f"{path} row {i}", columns, render)
            for i, row in enumerate(table.select_columns(wanted))]


def parse_row(row: dict[str, Any], where: str, columns: Columns, render: Render) -> Sample:
    return Sample(prompt=_prompt(row[columns.prompt], f"{where}, column {columns.prompt!r}", render),
                  answer=_answer(row[columns.answer], f"{where}, column {columns.answer!r}"),
                  source=where, extra={c: row[c] for c in columns.extra})


def _prompt(value: Any, where: str, render: Render) -> str:
    if isinstance(value, str):
        if not value.strip():
            raise DatasetError(f"{where}: the prompt is empty")
        return value
    if isinstance(value, list):
        return render(check_messages(value, where), where)
    raise DatasetError(f"{where}: expected text or a list of chat messages, got {_kind(value)}")


def _answer(value: Any, where: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise DatasetError(f"{where}: the answer must be a string or a number, got {_kind(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise DatasetError(f"{where}: the answer is {value} (not a finite number)")
    text = str(value)
    if not text.strip():
        raise DatasetError(f"{where}: the answer is empty")
    return text


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def held_out(samples: list[Sample], fraction: float, seed: int, path: str) -> tuple[list[Sample], list[Sample]]:
    """(train, test): round(fraction * n) rows, drawn with `seed`, are the test split."""
    count = round(fraction * len(samples))
    if not 0 < count < len(samples):
        raise ConfigError(f"task.test_fraction = {fraction} of the {len(samples)} rows of {path} leaves "
                          f"{'no test' if count == 0 else 'no training'} row")
    order = list(range(len(samples)))
    random.Random(seed).shuffle(order)
    test_rows = set(order[:count])
    return ([s for i, s in enumerate(samples) if i not in test_rows],
            [s for i, s in enumerate(samples) if i in test_rows])


def dataset_splits(task, resolve: Callable[[str], Path], render: Render) -> tuple[list[Sample], list[Sample]]:
    """(train, test) of a `[task]` section with kind = "datasets"; `resolve` finds a recipe path."""
    if not task.train_path:
        raise ConfigError("task.kind = 'datasets' needs task.train_path")
    if task.test_path and task.test_fraction is not None:
        raise ConfigError("task.test_path and task.test_fraction both give a test split; set one")
    columns = Columns(task.prompt_field, task.answer_field, tuple(task.extra_fields))
    train = load_file(resolve(task.train_path), columns, render)
    if task.test_path:
        return train, load_file(resolve(task.test_path), columns, render)
    if task.test_fraction is not None:
        return held_out(train, task.test_fraction, task.seed, task.train_path)
    return train, []
