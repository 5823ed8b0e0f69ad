"""`rlvr eval --cot-judge`: CoT-pass@k beside pass@k, end to end, on constructed samples (a
function judge that re-checks the written arithmetic), on the shipped tiny model, and in
compare mode; per-sample judgements kept and re-read; one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

from rlvr.cli.main import main
from rlvr.evaluate.passk import pass_at_k

REPO = Path(__file__).resolve().parents[2]
ARITHMETIC = "function:rlvr.evaluate.baseline_judges:arithmetic_check"
# arithmetic_check: P = (true equations + 1) / (all equations + 2): one true 2/3, one false 1/3.
# At threshold 0.6 the reasoning is right iff its one equation holds.
CASES = [  # What is 7*8? gold 56. (answer right, reasoning right)
    ("7*8=56, so the answer is 56", True, True),
    ("7*8=58, less the 2 I carried: 56", True, False),  # right answer, wrong reasoning
    ("7*8=56, so the answer is 54", False, True),  # right reasoning, wrong answer
    ("7*8=64, so the answer is 64", False, False),
]


def write_rows(path: Path, responses: list[str], **extra) -> Path:
    rows = [{"prompt": "What is 7*8?", "response": r, "gold": "56", **extra} for r in responses]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def eval_cot(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["eval", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_constructed_cases_count_for_pass_but_not_for_cot_pass(tmp_path, capsys):
    samples = write_rows(tmp_path / "s.jsonl", [r for r, _, _ in CASES])
    out = tmp_path / "o"
    code, stdout, _ = eval_cot(capsys, "--samples", str(samples), "--k", "1,2", "--out", str(out),
                               "--cot-judge", ARITHMETIC, "--cot-threshold", "0.6")
    assert code == 0
    cot = json.loads((out / "results.json").read_text())["model"]["cot"]
    # n = 4, c = 2, D = 1: pass@1 1/2, CoT-pass@1 1/4, pass@2 5/6, CoT-pass@2 1 - C(3,2)/C(4,2) = 1/2
    assert cot["pass_at_k"]["1"]["mean"] == 0.5 and cot["cot_pass_at_k"]["1"]["mean"] == 0.25
    assert cot["pass_at_k"]["2"]["mean"] == pytest.approx(5 / 6) and cot["cot_pass_at_k"]["2"]["mean"] == 0.5
    assert set(cot["samples"].values()) == {1}
    assert "answer right & reasoning wrong 1 (pass@k only)" in stdout
    assert "0.833 [0.833, 0.833]   0.500 [0.500, 0.500]   0.333" in stdout
    rows = [json.loads(line) for line in (out / "cot_judgements.jsonl").read_text().splitlines()]
    assert [(r["meta"]["answer_correct"], r["meta"]["cot_correct"]) for r in rows] == [c[1:] for c in CASES]
    assert [r["meta"]["counts_for_cot_pass"] for r in rows] == [True, False, False, False]
    assert rows[0]["cot_p"] == pytest.approx(2 / 3)


def test_saved_judgements_rerun_without_the_judge_at_any_threshold(tmp_path, capsys):
    samples = write_rows(tmp_path / "s.jsonl", [r for r, _, _ in CASES])
    eval_cot(capsys, "--samples", str(samples), "--out", str(tmp_path / "a"), "--cot-judge", ARITHMETIC,
             "--cot-threshold", "0.6")
    first = json.loads((tmp_path / "a" / "results.json").read_text())["model"]["cot"]
    saved = tmp_path / "a" / "cot_judgements.jsonl"
    code, _, _ = eval_cot(capsys, "--samples", str(saved), "--out", str(tmp_path / "b"), "--cot-judge", "samples",
                          "--cot-threshold", "0.6")
    assert code == 0 and json.loads((tmp_path / "b" / "results.json").read_text())["model"]["cot"] == first
    # at 0.3 the 1/3 of the wrong equation passes too: D = 2, CoT-pass@1 = pass@1 = 1/2
    eval_cot(capsys, "--samples", str(saved), "--out", str(tmp_path / "c"), "--cot-judge", "samples",
             "--cot-threshold", "0.3")
    low = json.loads((tmp_path / "c" / "results.json").read_text())["model"]["cot"]
    assert low["cot_pass_at_k"]["1"]["mean"] == 0.5


def test_compare_shows_both_metrics_for_both_sides(tmp_path, capsys):
    base = write_rows(tmp_path / "base.jsonl", [r for r, _, _ in CASES])
    # the "trained" side: the same answers, but both right answers now with right reasoning
    trained = write_rows(tmp_path / "trained.jsonl", ["7*8=56, so the answer is 56", "8*7=56, so the answer is 56",
                                                      "7*8=56, so the answer is 54",
                                                      "7*8=64, so the answer is 64"])
    out = tmp_path / "o"
    code, stdout, _ = eval_cot(capsys, "--samples", str(base), "--compare", str(trained), "--k", "1,2",
                               "--out", str(out), "--cot-judge", ARITHMETIC, "--cot-threshold", "0.6")
    results = json.loads((out / "results.json").read_text())
    assert code == 0 and results["compare"]["diff"]["pass_at_k_diff"]["1"]["mean"] == 0.0
    assert results["compare"]["diff"]["cot_pass_at_k_diff"]["1"]["mean"] == 0.25  # 2/4 - 1/4
    assert results["compare"]["model"]["cot"]["cot_pass_at_k"]["2"]["mean"] == pytest.approx(5 / 6)
    assert "compare samples: answer right & reasoning right 2" in stdout and "diff CoT-pass@1" in stdout
    assert (out / "cot_judgements_compare.jsonl").is_file()
    html = (out / "report.html").read_text()
    assert "<td>CoT-pass@1</td><td>0.250 [0.250, 0.250]</td><td>0.500 [0.500, 0.500]</td>" in html
    assert "<td>CoT-pass@1</td><td>0.250 [0.250, 0.250]</td></tr>" in html  # the paired difference


@pytest.fixture
def parity_judge(monkeypatch):
    """Reasoning 'right' when its length is even: independent of the answer, so that all four
    cells fill on the tiny model's samples."""
    fake = types.ModuleType("cotfakes")
    fake.parity = lambda prompt, reasoning, question, reference: float(len(reasoning) % 2 == 0)
    monkeypatch.setitem(sys.modules, "cotfakes", fake)
    return "function:cotfakes:parity"


def test_tiny_model_results_follow_from_the_kept_judgements(tmp_path, capsys, parity_judge):
    tiny = str(REPO / "models/tiny-arith")
    out = tmp_path / "o"
    code, stdout, _ = eval_cot(capsys, tiny, "--n", "4", "--k", "1,4", "--limit", "12", "--max-new-tokens", "8",
                               "--out", str(out), "--compare", tiny, "--cot-judge", parity_judge)
    assert code == 0 and "CoT-pass@k: reasoning judged by function:cotfakes:parity" in stdout
    results = json.loads((out / "results.json").read_text())
    rows = [json.loads(line) for line in (out / "cot_judgements.jsonl").read_text().splitlines()]
    assert len(rows) == 48 and all(r["cot_p"] == float(len(r["response"]) % 2 == 0) for r in rows)
    by_prompt: dict[str, list[bool]] = {}
    for r in rows:
        by_prompt.setdefault(r["prompt"], []).append(r["meta"]["answer_correct"] and r["cot_p"] == 1.0)
    expected = sum(pass_at_k(4, sum(d), 1) for d in by_prompt.values()) / len(by_prompt)
    cot = results["model"]["cot"]
    assert cot["cot_pass_at_k"]["1"]["mean"] == pytest.approx(expected)
    assert cot["cot_pass_at_k"]["4"]["mean"] <= cot["pass_at_k"]["4"]["mean"]
    assert sum(cot["samples"].values()) == 48
    # the same model and seed on both sides: the same samples, the same judgements, no difference
    assert results["compare"]["diff"]["cot_pass_at_k_diff"]["4"] == {"mean": 0.0, "ci": [0.0, 0.0]}


@pytest.mark.parametrize("argv, message", [
    (["--cot-judge", "nonsense"], "--cot-judge 'nonsense': expected function:package.module:function"),
    (["--cot-judge", "function:no_such_module:f"], "--cot-judge function:no_such_module:f: cannot import"),
    (["--cot-judge", ARITHMETIC, "--cot-threshold", "1.5"], "--cot-threshold must be in [0, 1], got 1.5"),
    (["--cot-judge", "samples"], "s.jsonl:1: no field 'cot_p' for --cot-judge samples"),
    (["--cot-judge", "rubric:recipes/demo.toml"], "the recipe's [reward] is not a rubric"),
])
def test_errors_are_one_line(tmp_path, capsys, argv, message, monkeypatch):
    monkeypatch.chdir(REPO)
    samples = write_rows(tmp_path / "s.jsonl", ["56"])
    code, _, err = eval_cot(capsys, "--samples", str(samples), "--out", str(tmp_path / "o"), *argv)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_bad_cot_p_names_the_line(tmp_path, capsys):
    samples = write_rows(tmp_path / "s.jsonl", ["56"], cot_p=1.5)
    code, _, err = eval_cot(capsys, "--samples", str(samples), "--out", str(tmp_path / "o"), "--cot-judge", "samples")
    assert code == 2 and "s.jsonl:1: field 'cot_p' must be a probability in [0, 1]" in err


def test_a_function_judge_on_samples_never_imports_torch(tmp_path):
    samples = write_rows(tmp_path / "s.jsonl", [r for r, _, _ in CASES])
    code = ("import argparse, sys\nfrom rlvr.cli import eval_command\n"
            "ap = argparse.ArgumentParser(); eval_command.add_parser(ap.add_subparsers())\n"
            f"eval_command.run_eval(ap.parse_args(['eval', '--samples', r'{samples}', '--out', r'{tmp_path / 'e'}', "
            f"'--cot-judge', '{ARITHMETIC}']))\n"
            "assert 'torch' not in sys.modules and 'transformers' not in sys.modules, 'torch was imported'\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_rubric_judges_the_reasoning(tmp_path, capsys, monkeypatch):
    fake = types.ModuleType("rubricfakes")
    # a program criterion sees (reasoning, gold): right when the working states the gold answer twice
    fake.states_gold = lambda response, gold: float(response.count(gold) >= 2)
    monkeypatch.setitem(sys.modules, "rubricfakes", fake)
    recipe = tmp_path / "rubric.toml"
    recipe.write_text('[reward]\nverifier = "rubric"\n'
                      'rubric = [{name = "working", function = "rubricfakes:states_gold"}]\n')
    samples = write_rows(tmp_path / "s.jsonl", ["7*8=56, so 56", "it is 56"])
    code, _, err = eval_cot(capsys, "--samples", str(samples), "--out", str(tmp_path / "o"),
                            "--cot-judge", f"rubric:{recipe}")
    assert code == 0, err
    cot = json.loads((tmp_path / "o" / "results.json").read_text())["model"]["cot"]
    assert cot["samples"]["answer_right_reasoning_right"] == 1 and cot["samples"]["answer_right_reasoning_wrong"] == 1


def test_a_genrm_judge_in_process_with_k_samples(tmp_path, capsys, random_judge):
    folder = random_judge  # conftest.py: a 1-layer random Qwen2 made in the test, nothing downloaded
    samples = write_rows(tmp_path / "s.jsonl", [r for r, _, _ in CASES])
    code, _, err = eval_cot(capsys, "--samples", str(samples), "--out", str(tmp_path / "o"),
                            "--cot-judge", f"model:{folder}", "--cot-judge-samples", "2",
                            "--cot-judge-max-new-tokens", "2", "--cot-judge-top", "1000")
    assert code == 0, err
    rows = [json.loads(line) for line in (tmp_path / "o" / "cot_judgements.jsonl").read_text().splitlines()]
    # a random judge: some P(yes) strictly inside (0, 1) for each sample, mean of 2 reasonings
    assert len(rows) == 4 and all(0.0 < r["cot_p"] < 1.0 for r in rows)
    code, _, err = eval_cot(capsys, "--samples", str(samples), "--out", str(tmp_path / "o"),
                            "--cot-judge", f"model:{folder}", "--cot-judge-samples", "0")
    assert code == 2 and "--cot-judge-samples" in err

