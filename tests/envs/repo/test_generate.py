"""The offline task generator: seeded bug injection into the seed modules, split by module."""

from __future__ import annotations

import json

from rlvr.envs.repo import DATA
from rlvr.envs.repo.generate import broken_mutants, choose, make_task, module_names, SEED_DIR
from rlvr.envs.repo.mutations import KINDS, mutations
from rlvr.envs.repo.patches import apply_patch


def rows(name):
    return [json.loads(line) for line in (DATA / f"{name}.jsonl").read_text().splitlines()]


def test_the_shipped_tasks_cover_twelve_modules_split_by_module():
    train, test = rows("train"), rows("test")
    assert len(train) + len(test) >= 300 and len(module_names()) >= 12
    train_modules, test_modules = {r["module"] for r in train}, {r["module"] for r in test}
    assert len(train_modules | test_modules) >= 12 and not train_modules & test_modules
    assert {r["bug_kind"] for r in train + test} == set(KINDS)


def test_a_task_hides_its_failing_tests_and_its_fix():
    row = rows("test")[0]
    name, files = row["module"], row["repo_tree"]["files"]
    visible = files[f"tests/test_{name}.py"]
    for test_id in row["FAIL_TO_PASS"]:
        assert f"def {test_id.split('::')[1]}(" not in visible  # hidden until test_patch
    fixed = apply_patch(files, row["patch"])
    assert fixed[f"{name}.py"] == (SEED_DIR / f"{name}.py").read_text()  # the inverse edit
    assert not any(p.endswith(".pyc") or "__pycache__" in p for p in files)


def test_mutations_are_one_line_edits_of_each_kind():
    source = (SEED_DIR / "search.py").read_text()
    found = mutations(source)
    assert {m.kind for m in found} >= {"compare", "operator", "off_by_one", "inverted", "deleted_line"}
    for m in found:
        changed = [(a, b) for a, b in zip(source.splitlines(), m.apply(source).splitlines()) if a != b]
        assert m.delete or len(changed) == 1


def test_the_generator_is_deterministic_from_its_seed():
    import random

    found = broken_mutants("matrix")
    first = [b.index for b in choose(found, random.Random(5), 6)]
    assert first == [b.index for b in choose(found, random.Random(5), 6)]
    assert first != [b.index for b in choose(found, random.Random(6), 6)] or len(found) <= 6
    task = make_task(found[0], (SEED_DIR / "matrix.py").read_text(), (SEED_DIR / "test_matrix.py").read_text())
    assert task.fail_to_pass and task.instance_id.startswith("matrix__")
