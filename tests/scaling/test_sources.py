"""Reading (compute, reward) points from a run folder or a CSV."""

from __future__ import annotations

import json

import pytest

from rlvr.scaling import FitError
from rlvr.scaling.sources import read_points


def run_folder(tmp_path, rows):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


ROWS = [{"step": 1, "throughput/tokens_per_s": 100.0, "time/step_s": 2.0, "time/elapsed_s": 2.0},
        {"step": 2, "throughput/tokens_per_s": 50.0, "time/step_s": 2.0, "time/elapsed_s": 4.0,
         "eval/accuracy": 0.3},
        {"step": 3, "throughput/tokens_per_s": 300.0, "time/step_s": 1.0, "time/elapsed_s": 5.0},
        {"step": 4, "throughput/tokens_per_s": 100.0, "time/step_s": 1.0, "time/elapsed_s": 6.0,
         "eval/accuracy": 0.5}]


def test_run_folder_tokens_and_seconds(tmp_path):
    folder = run_folder(tmp_path, ROWS)
    tokens = read_points(folder, "tokens")
    # cumulative tokens: 200, 300, 600, 700; eval at steps 2 and 4
    assert tokens.compute.tolist() == [300.0, 700.0] and tokens.reward.tolist() == [0.3, 0.5]
    assert (tokens.name, tokens.y) == ("run", "eval/accuracy")
    assert read_points(folder, "seconds").compute.tolist() == [4.0, 6.0]
    with pytest.raises(FitError, match="did not log 'compute/flops'"):
        read_points(folder, "flops")


def test_run_folder_logged_compute_is_preferred(tmp_path):
    rows = [{**r, "compute/flops": 1e9 * r["step"], "compute/tokens_generated": 10.0 * r["step"]} for r in ROWS]
    folder = run_folder(tmp_path, rows)
    assert read_points(folder, "flops").compute.tolist() == [2e9, 4e9]
    assert read_points(folder, "tokens").compute.tolist() == [20.0, 40.0]


def test_run_folder_errors(tmp_path):
    folder = run_folder(tmp_path, [{"step": 1, "time/elapsed_s": 1.0}])
    with pytest.raises(FitError, match="step 1 has no 'throughput/tokens_per_s'"):
        read_points(folder, "tokens")
    with pytest.raises(FitError, match="no step logged 'eval/accuracy'"):
        read_points(folder, "seconds")
    (folder / "metrics.jsonl").write_text('{"step": 1}\n{torn', encoding="utf-8")
    with pytest.raises(FitError, match="metrics.jsonl:2: not valid JSON"):
        read_points(folder, "seconds")
    with pytest.raises(FitError, match="no metrics.jsonl"):
        read_points(tmp_path, "seconds")


def test_csv_with_a_point_at_zero(tmp_path):
    path = tmp_path / "curve.csv"
    path.write_text("flops,reward\n0,0.2\n3e18,0.5\n1e18,0.4\n", encoding="utf-8")
    points = read_points(path, "flops")
    assert points.r0 == 0.2 and points.compute.tolist() == [1e18, 3e18]
    assert points.reward.tolist() == [0.4, 0.5]
    path.write_text("compute,score\n1,0.2\n", encoding="utf-8")
    assert read_points(path, "tokens", "score").compute.tolist() == [1.0]


@pytest.mark.parametrize("text, message", [
    ("flops,reward\n1,0.2\nabc,0.3\n", ":3: column 'flops' is 'abc', not a number"),
    ("flops,reward\n-1,0.2\n", ":2: column 'flops' is '-1'; it must be a finite number >= 0"),
    ("flops,reward\n1\n", ":2: column 'reward' is None, not a number"),
    ("tokens,acc\n1,0.2\n", ":1: need a 'flops' (or 'compute') column and a 'reward' column"),
    ("flops,reward\n", "no rows"),
])
def test_csv_errors_name_the_line(tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FitError, match=message.replace("(", "\\(").replace(")", "\\)")):
        read_points(path, "flops")


def test_unknown_axis_and_missing_path(tmp_path):
    with pytest.raises(FitError, match="--x 'gpu_hours'"):
        read_points(tmp_path, "gpu_hours")
    with pytest.raises(FitError, match="no such run folder or CSV file"):
        read_points(tmp_path / "nope", "tokens")
