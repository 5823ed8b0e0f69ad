"""`rlvr eval-judge` end to end: function judges, saved scores, a GenRM judge in process (a tiny
random model made here: nothing is downloaded), and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

from rlvr.cli.main import main
from rlvr.evaluate.judge_bench import PAIR_QUESTION

REPO = Path(__file__).resolve().parents[2]
ARITHMETIC = "function:rlvr.evaluate.baseline_judges:arithmetic_check"
LENGTH = "function:rlvr.evaluate.baseline_judges:longer_is_better"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["eval-judge", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_json_and_table_carry_the_same_numbers(capsys):
    code, out, _ = run(capsys, "--judge", ARITHMETIC, "--json")
    assert code == 0
    result = json.loads(out)
    assert result["file"].endswith("judge_bench_small.jsonl") and result["judge"] == ARITHMETIC
    assert set(result) >= {"pointwise", "verifier_agreement", "best_of_n", "pairwise"}
    code, table, _ = run(capsys, "--judge", ARITHMETIC)
    accuracy = result["pointwise"]["accuracy"]
    assert f"accuracy           {accuracy['mean']:.3f} [{accuracy['ci'][0]:.3f}, {accuracy['ci'][1]:.3f}]" in table
    assert f"Cohen's kappa {result['verifier_agreement']['kappa']:.3f}" in table
    assert "best-of-N: 20 prompts, N = 3" in table and "pairwise: 20 pairs" in table


def test_a_user_function_judge(capsys, monkeypatch):
    fake = types.ModuleType("judgefakes")
    fake.first = lambda prompt, response, question, reference: 0.9 if question == PAIR_QUESTION else 0.2
    monkeypatch.setitem(sys.modules, "judgefakes", fake)
    code, out, _ = run(capsys, "--judge", "function:judgefakes:first", "--json")
    result = json.loads(out)
    assert code == 0 and result["pairwise"]["flip_rate"]["mean"] == 1.0
    assert result["pointwise"]["recall"] == 0.0 and result["pointwise"]["precision"] is None


def test_saved_scores_give_the_same_results(capsys, tmp_path):
    saved = tmp_path / "scored.jsonl"
    # longer_is_better: P(A better) depends on which response is A, so a swapped column shows
    code, out, _ = run(capsys, "--judge", LENGTH, "--json", "--save-scores", str(saved))
    first = json.loads(out)
    assert code == 0 and first["pairwise"]["accuracy"]["mean"] != 0.5
    code, out, _ = run(capsys, str(saved), "--json")  # --judge scores, the default
    again = json.loads(out)
    assert code == 0 and {k: again[k] for k in ("pointwise", "pairwise", "best_of_n")} == \
        {k: first[k] for k in ("pointwise", "pairwise", "best_of_n")}


def test_a_genrm_judge_in_process(capsys, random_judge, tmp_path):
    rows = tmp_path / "two.jsonl"
    rows.write_text(json.dumps({"prompt": "2+2=", "response": "4", "label": 1}) + "\n"
                    + json.dumps({"prompt": "2+2=", "chosen": "4", "rejected": "5"}) + "\n")
    code, out, err = run(capsys, str(rows), "--judge", f"model:{random_judge}", "--judge-top", "200", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert 0.0 < result["pointwise"]["brier"] < 1.0  # a real P(yes), neither 0 nor 1
    code, _, err = run(capsys, str(rows), "--judge", f"model:{random_judge}", "--judge-top", "1")
    assert code == 2 and "two.jsonl:1: judge: none of 1 sample(s) put 'yes' or 'no'" in err


@pytest.mark.parametrize("argv, message", [
    (["--judge", "oracle"], "--judge 'oracle': expected scores, function:package.module:function"),
    (["--judge", "function:nosuchmodule:f"], "cannot import 'nosuchmodule'"),
    (["--judge", "model:/nonexistent"], "--judge model:/nonexistent: no such model folder"),
    (["--judge", ARITHMETIC, "--verifier", "maths"], "--verifier 'maths': expected one of"),
    (["--judge", ARITHMETIC, "--threshold", "2"], "--threshold must be in [0, 1]"),
    (["--judge", "function:judgefakes:says_maybe"], "small.jsonl:1: the judge returned 'maybe', not a probability"),
    (["--judge", "http:http://127.0.0.1:9/v1"], "small.jsonl:1: judge server http://127.0.0.1:9/v1/completions: cannot connect"),
    ([], "judge_bench_small.jsonl:1: no 'judge_p_yes' for --judge scores"),
])
def test_errors_are_one_line_with_exit_status_2(capsys, monkeypatch, argv, message):
    fake = types.ModuleType("judgefakes")
    fake.says_maybe = lambda prompt, response, question, reference: "maybe"
    monkeypatch.setitem(sys.modules, "judgefakes", fake)
    code, _, err = run(capsys, *argv)
    assert code == 2 and message in err and err.count("\n") == 1, err


def test_the_shipped_model_is_refused_with_its_context(capsys):
    code, _, err = run(capsys, "--judge", f"model:{REPO / 'models/tiny-arith'}")
    assert code == 2 and "over the judge model's context of 64" in err


def test_a_function_judge_never_imports_torch(tmp_path):
    probe = ("import sys; from rlvr.cli.main import main; "
             f"main(['eval-judge', '--judge', '{ARITHMETIC}', '--json']); "
             "print('torch' in sys.modules, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0 and done.stderr.strip().endswith("False"), done.stderr
