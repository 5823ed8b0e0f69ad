"""Task rows (SWE-bench's fields), the loader, and the load-time validation that refuses broken tasks."""

from __future__ import annotations

import json
import subprocess

import pytest

from rlvr.errors import DatasetError
from rlvr.envs.repo.load import load_repo_tasks
from rlvr.envs.repo.task import task_from_row, task_row
from rlvr.envs.repo.tree import TreeLimits

from .conftest import BUGGY, VISIBLE, calc_row


def write(tmp_path, rows, name="tasks.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_row_round_trips_and_ids_may_be_json_text():
    row = calc_row(FAIL_TO_PASS=json.dumps(["tests/test_ops.py::test_add"]))
    task = task_from_row(row, "x:1")
    assert task.fail_to_pass == ("tests/test_ops.py::test_add",)
    assert task_from_row(task_row(task), "x:2") == task


@pytest.mark.parametrize("change, words", [
    ({"FAIL_TO_PASS": []}, "FAIL_TO_PASS is empty"),
    ({"FAIL_TO_PASS": ["test_add"]}, "FAIL_TO_PASS must be a list of pytest ids"),
    ({"repo_path": "/x"}, "exactly one of repo_tree"),
    ({"test_patch": ""}, "test_patch must be non-empty"),
])
def test_a_malformed_row_is_refused_naming_where_and_the_field(change, words):
    with pytest.raises(DatasetError, match=f"f.jsonl:7: .*{words}"):
        task_from_row(calc_row(**change), "f.jsonl:7")


def test_a_repository_too_large_for_the_sandbox_is_refused_by_name(tmp_path):
    path = write(tmp_path, [calc_row()])
    with pytest.raises(DatasetError, match="repository calc-1 is too large for the sandbox: 3 files"):
        load_repo_tasks(path, limits=TreeLimits(max_files=2))
    with pytest.raises(DatasetError, match="too large for the sandbox: .* bytes"):
        load_repo_tasks(path, limits=TreeLimits(max_bytes=50))


def test_a_path_outside_the_repository_is_refused():
    row = calc_row(repo_tree={"files": {"../etc/x.py": ""}})
    with pytest.raises(DatasetError, match=r"outside the repository \('\.\.'\)"):
        task_from_row(row, "f:1")


def test_a_local_git_checkout_is_read_at_its_base_commit(tmp_path):
    repo = tmp_path / "checkout"
    for path, text in {**BUGGY, **VISIBLE}.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    git = lambda *a: subprocess.run(["git", "-C", str(repo), *a], check=True, capture_output=True)  # noqa: E731
    git("init", "-q"), git("add", "."), git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    (repo / "calc/ops.py").write_text("changed after the base commit\n")
    (repo / "calc/__pycache__").mkdir()
    (repo / "calc/__pycache__/ops.cpython-312.pyc").write_bytes(b"\0compiled")
    row = {k: v for k, v in calc_row().items() if k != "repo_tree"}
    (task,) = load_repo_tasks(write(tmp_path, [{**row, "repo_path": "checkout", "base_commit": commit}]))
    assert task.base == {**BUGGY, **VISIBLE}
    (task,) = load_repo_tasks(write(tmp_path, [{**row, "repo_path": str(repo)}]))
    assert task.base["calc/ops.py"] == "changed after the base commit\n" and len(task.base) == 3  # no .pyc


def test_a_datasets_file_loads_like_jsonl(tmp_path):
    datasets = pytest.importorskip("datasets")
    path = tmp_path / "tasks.parquet"
    datasets.Dataset.from_list([calc_row()]).to_parquet(str(path))
    (task,) = load_repo_tasks(path)
    assert task.instance_id == "calc-1" and task.base == {**BUGGY, **VISIBLE}


@pytest.mark.sandbox
def test_a_sound_task_loads_and_is_cached(tmp_path, sandbox):
    path = write(tmp_path, [calc_row()])
    (task,) = load_repo_tasks(path, sandbox)
    assert (tmp_path / "tasks.jsonl.validated").read_text().strip()


@pytest.mark.sandbox
@pytest.mark.parametrize("change, words", [
    ({"patch": ""}, "no reference patch"),
    ({"FAIL_TO_PASS": ["tests/test_ops.py::test_neg"], "PASS_TO_PASS": []}, "test_neg passes before the reference patch"),
    ({"PASS_TO_PASS": ["tests/test_ops.py::test_nothing"]}, "test_nothing does not pass after the reference patch"),
])
def test_a_broken_task_is_refused_at_load_with_its_id(tmp_path, sandbox, change, words):
    path = write(tmp_path, [calc_row(), calc_row(instance_id="calc-2", **change)])
    with pytest.raises(DatasetError, match=f"task calc-2 is refused: .*{words}"):
        load_repo_tasks(path, sandbox)
