"""A repository task: one row in SWE-bench's field names, with the repository given locally.

    {"instance_id": "textkit__wrap-3",
     "problem_statement": "wrap() drops the last word ...",
     "patch": "diff --git a/textkit/wrap.py b/textkit/wrap.py ...",   # the reference fix (optional)
     "test_patch": "diff --git a/tests/test_wrap.py ...",            # the hidden tests
     "FAIL_TO_PASS": ["tests/test_wrap.py::test_last_word"],
     "PASS_TO_PASS": ["tests/test_wrap.py::test_empty"],
     "repo_tree": {"files": {"textkit/wrap.py": "...", ...}}}       # a packed tree, or:
     "repo_path": "/path/to/checkout", "base_commit": "abc123"}      # a local folder (+ commit)

FAIL_TO_PASS / PASS_TO_PASS may also be JSON text holding the list (as SWE-bench ships them).
Where SWE-bench names a Docker image, a row here names a local folder (`repo_path`, read at
`base_commit` when given, else its files as they are) or carries the files (`repo_tree`).
Other SWE-bench fields (repo, version, hints_text, created_at, ...) are kept in `extra`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from rlvr.errors import DatasetError
from rlvr.envs.repo.tree import Tree, TreeError, TreeLimits, check_tree, tree_from_folder, tree_from_git

REQUIRED = ("instance_id", "problem_statement", "test_patch", "FAIL_TO_PASS", "PASS_TO_PASS")


@dataclass(frozen=True)
class RepoTask:
    """One task (see the module docstring); `base` is the repository at its base commit."""

    instance_id: str
    problem_statement: str
    test_patch: str
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    base: Tree
    patch: str = ""
    extra: dict = field(default_factory=dict, compare=False)

    @property
    def test_ids(self) -> tuple[str, ...]:
        return self.fail_to_pass + self.pass_to_pass

    def pristine(self) -> Tree:
        """A fresh copy of the base tree (the task's own is never handed out)."""
        return dict(self.base)


def _id_list(row: dict, key: str, where: str) -> tuple[str, ...]:
    value = row[key]
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise DatasetError(f"{where}: {key} is text but not a JSON list") from None
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) and "::" in v for v in value):
        raise DatasetError(f"{where}: {key} must be a list of pytest ids (PATH.py::NAME)")
    return tuple(value)


def _base_tree(row: dict, where: str, limits: TreeLimits, root: Path | None) -> Tree:
    packed, path = row.get("repo_tree"), row.get("repo_path")
    if (packed is None) == (path is None):
        raise DatasetError(f"{where}: give exactly one of repo_tree (packed files) and repo_path (a folder)")
    name = row["instance_id"]
    try:
        if packed is not None:
            files = packed.get("files") if isinstance(packed, dict) else None
            if not isinstance(files, dict):
                raise DatasetError(f"{where}: repo_tree must be {{\"files\": {{path: text}}}}")
            return check_tree(files, name, limits)
        folder = Path(path) if Path(path).is_absolute() or root is None else root / path
        commit = row.get("base_commit")
        return tree_from_git(folder, commit, limits) if commit else tree_from_folder(folder, limits)
    except TreeError as error:
        raise DatasetError(f"{where}: {error}") from None


def task_from_row(row: dict, where: str, limits: TreeLimits = TreeLimits(), root: Path | None = None) -> RepoTask:
    """A `RepoTask` from one row; DatasetError naming `where` (file:line) and the field if malformed.

    `root`: the folder a relative repo_path is read from (the data file's folder).
    """
    if not isinstance(row, dict):
        raise DatasetError(f"{where}: a task row must be an object")
    missing = [k for k in REQUIRED if k not in row]
    if missing:
        raise DatasetError(f"{where}: missing field(s) {missing} (SWE-bench's names)")
    for key in ("instance_id", "problem_statement", "test_patch"):
        if not isinstance(row[key], str) or not row[key].strip():
            raise DatasetError(f"{where}: {key} must be non-empty text")
    if not isinstance(row.get("patch", ""), str):
        raise DatasetError(f"{where}: patch must be text (a unified diff)")
    fail, keep = _id_list(row, "FAIL_TO_PASS", where), _id_list(row, "PASS_TO_PASS", where)
    if not fail:
        raise DatasetError(f"{where}: FAIL_TO_PASS is empty: the task would have nothing to fix")
    known = set(REQUIRED) | {"patch", "repo_tree", "repo_path", "base_commit"}
    return RepoTask(row["instance_id"], row["problem_statement"], row["test_patch"], fail, keep,
                    _base_tree(row, where, limits, root), row.get("patch", ""),
                    {k: v for k, v in row.items() if k not in known})


def task_row(task: RepoTask) -> dict:
    """The row of a task with its tree packed (what `task_from_row` reads back)."""
    return {"instance_id": task.instance_id, "problem_statement": task.problem_statement,
            "patch": task.patch, "test_patch": task.test_patch,
            "FAIL_TO_PASS": list(task.fail_to_pass), "PASS_TO_PASS": list(task.pass_to_pass),
            "repo_tree": {"files": dict(task.base)}, **task.extra}
