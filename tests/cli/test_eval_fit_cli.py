"""`rlvr eval` and `rlvr fit` end to end: the shipped tiny model, a samples file, a CSV, a run folder."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from rlvr.cli.main import main
from rlvr.scaling import sigmoid_reward

REPO = Path(__file__).resolve().parents[2]


def test_eval_and_compare_on_the_tiny_model(tmp_path, capsys):
    out = tmp_path / "eval"
    tiny = str(REPO / "models/tiny-arith")
    code = main(["eval", tiny, "--n", "4", "--k", "1,2,4", "--limit", "20", "--max-new-tokens", "8",
                 "--out", str(out), "--compare", tiny])
    stdout = capsys.readouterr().out
    assert code == 0
    assert "pass@4" in stdout and "report:" in stdout
    results = json.loads((out / "results.json").read_text())
    model = results["model"]
    assert model["prompts"] == 20 and model["samples"] == 80
    p1, p4 = model["pass_at_k"]["1"], model["pass_at_k"]["4"]
    assert 0 < p1["mean"] <= p4["mean"] <= 1 and p1["ci"][0] <= p1["mean"] <= p1["ci"][1]
    assert model["best_of_n"]["logprob"] is not None
    assert sum(model["pass_rate_histogram"]["counts"]) == 20
    # the same model with the same seed draws the same samples: nothing changes
    diff = results["compare"]["diff"]
    assert diff["pass_at_k_diff"]["4"] == {"mean": 0.0, "ci": [0.0, 0.0]}
    assert (diff["changes"]["solved"], diff["changes"]["lost"], diff["changes"]["same"]) == (0, 0, 20)
    rows = [json.loads(line) for line in (out / "disagreements.jsonl").read_text().splitlines()]
    assert len(rows) == model["disagreements"] and len(rows[0]["samples"]) == 4
    html = (out / "report.html").read_text()
    assert html.count("data:image/png;base64,") == 2 and "Compare" in html


def test_eval_from_a_samples_file(tmp_path, capsys):
    rows = [{"prompt": "1+1=", "response": r, "gold": "2"} for r in ("2", "2", "3", "2")]
    rows += [{"prompt": "2+2=", "response": r, "gold": "4"} for r in ("4", "5", "5", "5")]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["eval", "--samples", str(path), "--out", str(tmp_path / "o")]) == 0
    results = json.loads((tmp_path / "o" / "results.json").read_text())["model"]
    assert list(results["pass_at_k"]) == ["1", "2", "4"]  # default k: powers of 2 up to n
    assert results["pass_at_k"]["1"]["mean"] == 0.5  # (3/4 + 1/4) / 2
    assert results["maj_at_k"]["4"]["mean"] == 0.5  # 2 wins, 5 wins
    assert results["best_of_n"]["logprob"] is None
    assert "pass@1" in capsys.readouterr().out


def test_eval_errors_are_one_line(tmp_path, capsys):
    path = tmp_path / "s.jsonl"
    path.write_text('{"prompt": "1+1=", "response": "2", "gold": "2"}\n{"prompt": "1+1="}\n')
    assert main(["eval", "--samples", str(path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    expected = f"rlvr: error: {path}:2: missing field 'response' (each row needs ['prompt', 'response', 'gold'])"
    assert err.strip() == expected
    assert main(["eval", str(REPO / "models/tiny-arith"), "--n", "2", "--k", "4"]) == 2
    assert "--k 4 is larger than --n 2" in capsys.readouterr().err
    assert main(["eval"]) == 2
    assert "needs a MODEL_PATH or --samples" in capsys.readouterr().err
    checkpoint = tmp_path / "step_5"  # an older rlvr's checkpoint: weights and config, no tokenizer
    checkpoint.mkdir()
    (checkpoint / "config.json").write_text("{}")
    assert main(["eval", str(checkpoint), "--n", "1"]) == 2
    assert "no tokenizer files here (a checkpoint of an rlvr older than 2026-12-01?); pass --tokenizer" in capsys.readouterr().err


def write_csv(path: Path, compute, reward) -> Path:
    path.write_text("flops,reward\n" + "".join(f"{c},{r}\n" for c, r in zip(compute, reward)))
    return path


def test_fit_on_a_csv_with_target_and_holdout(tmp_path, capsys):
    compute = np.logspace(15, 19, 24)
    reward = sigmoid_reward(compute, 0.2, 0.7, 1.2, 1e17) + np.random.default_rng(0).normal(0, 0.01, 24)
    csv = write_csv(tmp_path / "recipe.csv", compute, reward)
    code = main(["fit", str(csv), "--x", "flops", "--target", "1e20", "--holdout", "0.25", "--tolerance", "0.15",
                 "--resamples", "40", "--out", str(tmp_path / "fit")])
    out = capsys.readouterr().out  # 1e20 is 100x the fitted compute: a half-width of 0.13 there
    assert code == 0 and "R(C = 1e+20) = " in out and "held-out mean |error|" in out
    record = json.loads((tmp_path / "fit" / "fit.json").read_text())["inputs"][0]
    assert abs(record["target"]["predicted"] - 0.7) < 0.02 and record["target"]["refused"] is None
    assert abs(record["fit"]["params"]["A"] - 0.7) < 0.03 and record["fitted"] == 18
    assert (tmp_path / "fit" / "fit.png").stat().st_size > 10_000


def test_fit_failures_are_clear(tmp_path, capsys):
    few = write_csv(tmp_path / "few.csv", [1, 2, 3], [0.1, 0.2, 0.3])
    assert main(["fit", str(few), "--x", "flops", "--resamples", "10", "--out", str(tmp_path / "f")]) == 2
    assert "cannot fit: too few points" in capsys.readouterr().out
    early = np.logspace(2, 3.5, 20)
    reward = sigmoid_reward(early, 0.1, 0.8, 1.5, 1e4) + np.random.default_rng(0).normal(0, 0.01, 20)
    csv = write_csv(tmp_path / "early.csv", early, reward)
    assert main(["fit", str(csv), "--x", "flops", "--target", "1e6", "--resamples", "40",
                 "--out", str(tmp_path / "f")]) == 0
    out = capsys.readouterr().out
    assert "ceiling A not identified: the ceiling is not identified yet" in out
    assert "no forecast at C = 1e+06: the 90% interval" in out and "> tolerance 0.1" in out
    assert "R(C = 1e+06)" not in out
    assert main(["fit", str(csv), "--x", "flops", "--target", "1e6", "--tolerance", "0.5", "--resamples", "10",
                 "--out", str(tmp_path / "f")]) == 0
    assert "R(C = 1e+06) = " in capsys.readouterr().out  # a tolerance of 0.5 accepts the wide interval


def test_fit_compare_names_the_higher_asymptote_and_says_when_runs_are_not_separated(tmp_path, capsys):
    compute = np.arange(1, 25) * 1000.0
    rng = np.random.default_rng(1)
    high = write_csv(tmp_path / "high.csv", compute, sigmoid_reward(compute, 0.2, 0.8, 2.0, 4000) + rng.normal(0, 0.01, 24))
    low = write_csv(tmp_path / "low.csv", compute, sigmoid_reward(compute, 0.2, 0.5, 2.0, 4000) + rng.normal(0, 0.01, 24))
    twin = write_csv(tmp_path / "twin.csv", compute, sigmoid_reward(compute, 0.2, 0.8, 2.0, 4000) + rng.normal(0, 0.01, 24))
    assert main(["fit", str(high), str(low), "--x", "flops", "--compare", "--resamples", "10", "--out", str(tmp_path / "c")]) == 0
    out = capsys.readouterr().out
    assert "higher asymptote: high; A: high 0.80" in out and "low 0.49" in out
    compared = json.loads((tmp_path / "c" / "fit.json").read_text())["compare"]
    a_high, a_low = compared["runs"][0]["A"], compared["runs"][1]["A"]
    assert a_high["ci"][0] < 0.8 < a_high["ci"][1] and a_low["ci"][0] < 0.5 < a_low["ci"][1]
    assert main(["fit", str(high), str(twin), "--x", "flops", "--compare", "--resamples", "10", "--out", str(tmp_path / "c")]) == 0
    assert "higher asymptote: not separated yet" in capsys.readouterr().out
    assert main(["fit", str(high), "--x", "flops", "--compare", "--out", str(tmp_path / "c")]) == 2
    assert "--compare needs at least two runs" in capsys.readouterr().err


def test_fit_on_a_run_folder(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    rows = []
    for step in range(1, 201):
        row = {"step": step, "throughput/tokens_per_s": 500.0, "time/step_s": 0.2, "time/elapsed_s": 0.2 * step}
        if step % 10 == 0:
            row["eval/accuracy"] = float(sigmoid_reward([100.0 * step], 0.2, 0.6, 2.0, 3000.0)[0])
        rows.append(row)
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["fit", str(run), "--resamples", "20", "--out", str(tmp_path / "f")]) == 0
    assert "run: 20 points (eval/accuracy vs tokens)" in capsys.readouterr().out
    assert main(["fit", str(run), "--x", "flops", "--out", str(tmp_path / "f")]) == 2
    assert "did not log 'compute/flops'" in capsys.readouterr().err


def test_fit_names_the_axis_after_the_csv_column(tmp_path, capsys):
    compute = np.logspace(2, 6, 20)
    reward = sigmoid_reward(compute, 0.1, 0.8, 1.5, 1e4) + np.random.default_rng(0).normal(0, 0.01, 20)
    path = tmp_path / "c.csv"
    path.write_text("compute,reward\n" + "".join(f"{c},{r}\n" for c, r in zip(compute, reward)))
    assert main(["fit", str(path), "--resamples", "20", "--out", str(tmp_path / "f")]) == 0
    out = capsys.readouterr().out
    assert "c: 20 points (reward vs compute)" in out and "tokens" not in out
    assert json.loads((tmp_path / "f" / "fit.json").read_text())["inputs"][0]["x"] == "compute"


def test_eval_samples_and_fit_never_import_torch(tmp_path):
    import subprocess
    import sys

    rows = [{"prompt": "1+1=", "response": r, "gold": "2"} for r in ("2", "3")]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    write_csv(tmp_path / "c.csv", np.logspace(2, 6, 12), np.linspace(0.1, 0.7, 12))
    code = ("import argparse, sys\nfrom rlvr.cli import eval_command, fit_command\n"
            "ap = argparse.ArgumentParser(); sub = ap.add_subparsers(dest='c')\n"
            "eval_command.add_parser(sub); fit_command.add_parser(sub)\n"
            f"eval_command.run_eval(ap.parse_args(['eval', '--samples', r'{tmp_path / 's.jsonl'}', '--out', r'{tmp_path / 'e'}']))\n"
            f"fit_command.run_fit(ap.parse_args(['fit', r'{tmp_path / 'c.csv'}', '--x', 'flops', '--resamples', '5', "
            f"'--out', r'{tmp_path / 'f'}']))\n"
            "assert 'torch' not in sys.modules and 'transformers' not in sys.modules, 'torch was imported'\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
