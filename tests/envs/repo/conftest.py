"""A tiny repository task for the repo-environment tests, and one sandbox for all of them."""

from __future__ import annotations

import pytest

from rlvr.envs.repo.patches import diff_trees
from rlvr.envs.repo.task import RepoTask, task_from_row
from rlvr.rewards.sandbox import Limits, Sandbox, bwrap_unavailable

WHY_NOT = bwrap_unavailable()

GOOD = {"calc/__init__.py": "", "calc/ops.py": "def add(a, b):\n    return a + b\n\n\ndef neg(a):\n    return -a\n"}
BUGGY = {**GOOD, "calc/ops.py": GOOD["calc/ops.py"].replace("a + b", "a - b")}
VISIBLE = {"tests/test_ops.py": "from calc.ops import add, neg\n\n\ndef test_neg():\n    assert neg(2) == -2\n"}
HIDDEN = {"tests/test_ops.py": VISIBLE["tests/test_ops.py"] + "\n\ndef test_add():\n    assert add(1, 2) == 3\n"}


def calc_row(**over) -> dict:
    row = {"instance_id": "calc-1", "problem_statement": "add(1, 2) gives -1, expected 3",
           "patch": diff_trees(BUGGY, GOOD), "test_patch": diff_trees(VISIBLE, HIDDEN),
           "FAIL_TO_PASS": ["tests/test_ops.py::test_add"], "PASS_TO_PASS": ["tests/test_ops.py::test_neg"],
           "repo_tree": {"files": {**BUGGY, **VISIBLE}}}
    return {**row, **over}


@pytest.fixture
def calc_task() -> RepoTask:
    return task_from_row(calc_row(), "test")


@pytest.fixture(scope="session")
def sandbox():
    if WHY_NOT is not None:
        pytest.skip(f"bubblewrap cannot sandbox here: {WHY_NOT}")
    with Sandbox(Limits(wall_s=30, test_wall_s=5, cpu_s=5), workers=2) as pool:
        yield pool
