"""A resume on data other than the run's is refused, naming the file (issue 26), unless asked
for with --accept-data-change, which data.json records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlvr.cli.main import main
from rlvr.orchestrate import resume
from rlvr.orchestrate.data_fingerprint import rows_fingerprint
from rlvr.types import Sample

SMALL = ["sampling.prompts_per_step=2", "sampling.group_size=2", "eval.size=0", "log.progress=none"]
ROWS = [{"prompt": f"{a}+{b}=", "answer": str(a + b)} for a in range(10, 18) for b in range(10, 14)]  # 32 rows


def write_rows(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def cli(capsys, *args) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().err.strip()


@pytest.fixture
def run(tmp_path, capsys):
    train = tmp_path / "train.jsonl"
    write_rows(train, ROWS)
    code, err = cli(capsys, "train", "grpo", *[f"--set={o}" for o in SMALL], f"--set=run.output_dir={tmp_path}",
                    "--set=run.name=r", "--set=train.steps=1", "--set=task.kind=jsonl", f"--set=task.train_path={train}")
    assert code == 0, err
    return tmp_path / "r", train


@pytest.mark.parametrize("change, how", [
    (lambda rows: [{**r, "answer": "0"} if i == 5 else r for i, r in enumerate(rows)], "the same 32 rows, but"),
    (lambda rows: rows[:20], "32 rows then, 20 now"),
    (lambda rows: rows[::-1], "the same 32 rows, but their content or order changed"),
    (lambda rows: rows + rows, "32 rows then, 64 now")])
def test_a_resume_on_changed_data_is_refused_naming_the_file(run, capsys, change, how):
    folder, train = run
    write_rows(train, change(ROWS))
    code, err = cli(capsys, "train", "--resume", str(folder), "--set=train.steps=2")
    assert code == 2 and len(err.splitlines()) == 1, err  # before: exit 0, trained on the new data
    assert f"{train}: the train rows differ from those the run started on ({how}" in err
    assert "--accept-data-change" in err


def test_the_override_continues_and_is_recorded(run, capsys):
    folder, train = run
    write_rows(train, ROWS[:20])
    code, err = cli(capsys, "train", "--resume", str(folder), "--set=train.steps=2", "--accept-data-change")
    assert code == 0 and "continuing on changed data, as asked" in err
    [change] = json.loads((folder / "data.json").read_text())["changes"]
    assert change["at_step"] == 1 and change["before"]["train"]["rows"] == 32 and change["after"]["train"]["rows"] == 20
    assert resume(folder, ["train.steps=3"]).steps == 3  # the new data is the recorded one now


def test_rows_fingerprint_sees_every_field_and_the_row_boundaries():
    base = rows_fingerprint([Sample("ab", "c"), Sample("d", "e")])
    assert base == rows_fingerprint([Sample("ab", "c", source="elsewhere"), Sample("d", "e")])  # where, not what
    for other in ([Sample("a", "bc"), Sample("d", "e")], [Sample("ab", "c"), Sample("d", "e", extra={"k": 1})],
                  [Sample("d", "e"), Sample("ab", "c")]):
        assert rows_fingerprint(other)["sha256"] != base["sha256"]
