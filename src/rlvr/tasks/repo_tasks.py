"""task.kind = "repo": the samples that name repository tasks (prompt = the problem statement,
answer = the instance id). The tasks themselves, trees and tests, are loaded and validated by
env.kind = "repo" (rlvr.envs.repo.load) from the same files; here only the two fields are read."""

from __future__ import annotations

import json
from pathlib import Path

from rlvr.errors import DatasetError
from rlvr.types import Sample

SHIPPED = Path(__file__).resolve().parents[1] / "envs" / "repo" / "data"  # rlvr.envs.repo.DATA


def repo_samples(path: Path, size: int | None) -> list[Sample]:
    """The first `size` (None: all) tasks of a .jsonl or `datasets` file, as samples."""
    if not path.is_file():
        raise DatasetError(f"{path}: no such repository task file")
    if path.suffix == ".jsonl":
        rows = [(json.loads(line), f"{path}:{n}") for n, line in enumerate(path.read_text().splitlines(), 1) if line.strip()]
    else:
        import datasets

        fmt = {".parquet": "parquet", ".arrow": "arrow", ".json": "json", ".csv": "csv"}.get(path.suffix)
        if fmt is None:
            raise DatasetError(f"{path}: unknown task file type {path.suffix!r}")
        table = datasets.load_dataset(fmt, data_files=str(path), split="train")
        rows = [(dict(r), f"{path}:row {i}") for i, r in enumerate(table)]
    out = []
    for row, where in rows[:size]:
        if not isinstance(row.get("instance_id"), str) or not isinstance(row.get("problem_statement"), str):
            raise DatasetError(f"{where}: instance_id and problem_statement must be text")
        out.append(Sample(row["problem_statement"], row["instance_id"], where))
    return out


def repo_paths(train_path: str | None, test_path: str | None, resolve) -> tuple[Path, Path]:
    return (resolve(train_path) if train_path else SHIPPED / "train.jsonl",
            resolve(test_path) if test_path else SHIPPED / "test.jsonl")
