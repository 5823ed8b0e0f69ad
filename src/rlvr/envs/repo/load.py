"""Reading repository tasks from files, and refusing the broken ones before they can train.

`load_repo_tasks(path)` reads rows (`rlvr.envs.repo.task`) from a .jsonl file (one row a line)
or from any file Hugging Face `datasets` reads locally (.parquet, .arrow, .json, .csv; never a
hub name), then, with `sandbox=`, validates each task:

- its FAIL_TO_PASS tests, with the hidden tests on the base, must all fail (none may pass);
- with the reference patch applied, every FAIL_TO_PASS and PASS_TO_PASS test must pass;

else the load stops with `DatasetError` naming the instance id and the test that broke the
rule. Validation costs one sandbox run per test, twice: a row whose content hash is listed in
the file's cache (`<file>.validated`, one hash a line, written after a validation passed) is
not run again; a changed row has another hash, so it is validated afresh.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from rlvr.errors import DatasetError
from rlvr.envs.repo.hidden_tests import HiddenTestError, run_tests
from rlvr.envs.repo.patches import PatchError, apply_patch
from rlvr.envs.repo.score import with_hidden_tests
from rlvr.envs.repo.task import RepoTask, task_from_row, task_row
from rlvr.envs.repo.tree import TreeLimits
from rlvr.rewards.sandbox import Sandbox

DATASETS_FORMATS = {".parquet": "parquet", ".arrow": "arrow", ".json": "json", ".csv": "csv"}


def read_rows(path: Path) -> list[tuple[dict, str]]:
    """(row, "file:line") for each row of a .jsonl or `datasets` file."""
    if not path.is_file():
        raise DatasetError(f"{path}: no such task file")
    if path.suffix == ".jsonl":
        rows = []
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                try:
                    rows.append((json.loads(line), f"{path}:{number}"))
                except ValueError as error:
                    raise DatasetError(f"{path}:{number}: not JSON ({error})") from None
        return rows
    if path.suffix not in DATASETS_FORMATS:
        raise DatasetError(f"{path}: unknown task file type {path.suffix!r}; use .jsonl or one of "
                           f"{sorted(DATASETS_FORMATS)}")
    import datasets  # a local file only: load_dataset(format, data_files=path)

    table = datasets.load_dataset(DATASETS_FORMATS[path.suffix], data_files=str(path), split="train")
    return [(dict(row), f"{path}:row {i}") for i, row in enumerate(table)]


def row_hash(task: RepoTask) -> str:
    return hashlib.sha256(json.dumps(task_row(task), sort_keys=True).encode()).hexdigest()


def validation_problem(task: RepoTask, sandbox: Sandbox) -> str | None:
    """Why `task` must not train (see the module docstring), or None when it is sound."""
    try:
        before = run_tests(sandbox, with_hidden_tests(task, task.pristine()), list(task.fail_to_pass))
        passing = [t for t in task.fail_to_pass if before.outcomes[t][0] is True]
        if passing:
            return f"FAIL_TO_PASS test {passing[0]} passes before the reference patch"
        if not task.patch.strip():
            return "no reference patch, so the tests cannot be checked to pass after it"
        fixed = with_hidden_tests(task, apply_patch(task.pristine(), task.patch))
        after = run_tests(sandbox, fixed, list(task.test_ids))
    except (PatchError, HiddenTestError) as error:
        return str(error)
    failing = [(t, after.outcomes[t][1]) for t in task.test_ids if after.outcomes[t][0] is not True]
    if failing:
        return f"test {failing[0][0]} does not pass after the reference patch ({failing[0][1]})"
    return None


def load_repo_tasks(path: str | Path, sandbox: Sandbox | None = None, limits: TreeLimits = TreeLimits()) -> list[RepoTask]:
    """The tasks of `path`; validated (module docstring) when a sandbox is given."""
    path = Path(path)
    tasks = [task_from_row(row, where, limits, path.parent) for row, where in read_rows(path)]
    seen: dict[str, int] = {}
    for task in tasks:
        seen[task.instance_id] = seen.get(task.instance_id, 0) + 1
    repeated = sorted(k for k, v in seen.items() if v > 1)
    if repeated:
        raise DatasetError(f"{path}: instance_id repeated: {repeated[:3]}")
    if sandbox is not None:
        validate_all(tasks, sandbox, Path(f"{path}.validated"))
    return tasks


def validate_all(tasks: list[RepoTask], sandbox: Sandbox, cache: Path) -> None:
    """Validate each task not in `cache`; DatasetError naming the first broken one."""
    known = set(cache.read_text().split()) if cache.is_file() else set()
    hashes = [row_hash(task) for task in tasks]
    todo = [(task, h) for task, h in zip(tasks, hashes) if h not in known]
    problems = _in_parallel(sandbox, [task for task, _ in todo])
    for (task, _), problem in zip(todo, problems):
        if problem:
            raise DatasetError(f"task {task.instance_id} is refused: {problem}")
    if todo:
        try:
            cache.write_text("".join(f"{h}\n" for h in sorted(known | set(hashes))))
        except OSError:  # a read-only data folder: validated again next time, never skipped
            pass


def _in_parallel(sandbox: Sandbox, tasks: list[RepoTask]) -> list[str | None]:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max(1, len(sandbox._runners))) as pool:
        return list(pool.map(lambda t: validation_problem(t, sandbox), tasks))
