"""`rlvr verify` end to end on small jsonl files: table, summary, --out, and bad rows with FILE:LINE."""

from __future__ import annotations

import json

from rlvr.cli.main import main


def write_jsonl(path, rows: list) -> str:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return str(path)


def test_instructions_rows_scored_with_table_summary_and_out(tmp_path, capsys):
    gold = [{"kind": "lowercase"}, {"kind": "word_count", "relation": "at_least", "value": 3}]
    data = write_jsonl(tmp_path / "data.jsonl", [
        {"prompt": "say hi", "response": "hi there friend", "gold": gold},
        "",  # blank lines are skipped, line numbers kept
        {"prompt": "say hi", "response": "Hi", "gold": json.dumps({"constraints": gold})},
    ])
    out = tmp_path / "results.jsonl"
    code = main(["verify", "--verifier", "instructions", data, "--out", str(out)])
    stdout = capsys.readouterr().out
    assert code == 0
    assert "hi there friend" in stdout and "reason" in stdout
    assert "2 rows scored: mean score 0.500, pass rate 0.500" in stdout  # (1 + 0) / 2
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["line"], r["score"]) for r in rows] == [(1, 1.0), (3, 0.0)]


def test_format_verifier_with_options_counts_flags(tmp_path, capsys):
    data = write_jsonl(tmp_path / "data.jsonl", [
        {"prompt": "q", "response": "so \\boxed{4}", "gold": 4},
        {"prompt": "q", "response": "no box", "gold": "4"},
    ])
    assert main(["verify", "--verifier", "format", "--option", "template=boxed", "--show", "1", data]) == 0
    stdout = capsys.readouterr().out
    assert "1 more rows not shown" in stdout and "flags: missing 1" in stdout
    assert main(["verify", "--verifier", "format", "--option", "template=boxed", "--option", "format_strict=true",
                 data]) == 0  # [reward] keys, as in a recipe
    assert "mean score 0.500" in capsys.readouterr().out


def test_a_template_scores_only_the_committed_answer(tmp_path, capsys):
    data = write_jsonl(tmp_path / "data.jsonl", [
        {"prompt": "6*7", "response": "<think>6 * 7 = 42</think><answer>42</answer>", "gold": "42"},
        {"prompt": "6*7", "response": "<think>6 * 7 = 42</think> so 42", "gold": "42"},
        {"prompt": "6*7", "response": "<think>6 * 7 = <answer>42</answer></think>", "gold": "42"},
    ])
    assert main(["verify", "--verifier", "math", data]) == 0  # no template: the number in the reasoning is paid
    assert "mean score 1.000" in capsys.readouterr().out
    assert main(["verify", "--verifier", "math", "--option", "template=think_answer", data]) == 0
    stdout = capsys.readouterr().out
    assert "mean score 0.333" in stdout and "flags: no_committed_answer 2" in stdout


def test_malformed_rows_are_all_listed_with_file_and_line(tmp_path, capsys):
    data = write_jsonl(tmp_path / "bad.jsonl", [
        {"prompt": "q", "response": "r", "gold": "g"},
        "not json",
        {"prompt": "q", "gold": "g"},
        {"prompt": "q", "response": 3, "gold": "g"},
    ])
    assert main(["verify", "--verifier", "instructions", data]) == 2
    err = capsys.readouterr().err
    assert "3 malformed row(s), nothing scored" in err
    assert f"{data}:2: not valid JSON" in err and f"{data}:3: missing field 'response'" in err
    assert f"{data}:4: ['response'] must be strings" in err and "Traceback" not in err


def test_a_gold_the_verifier_rejects_is_reported_after_the_good_rows(tmp_path, capsys):
    data = write_jsonl(tmp_path / "data.jsonl", [
        {"prompt": "q", "response": "ok", "gold": [{"kind": "lowercase"}]},
        {"prompt": "q", "response": "ok", "gold": [{"kind": "lowercse"}]},
    ])
    assert main(["verify", "--verifier", "instructions", data]) == 2
    captured = capsys.readouterr()
    assert "1 rows scored, 1 rejected" in captured.out
    assert f"{data}:2: gold rejected: constraint 0" in captured.err and "did you mean 'lowercase'" in captured.err


def test_bad_verifier_name_and_options_exit_2(tmp_path, capsys):
    data = write_jsonl(tmp_path / "data.jsonl", [{"prompt": "q", "response": "r", "gold": "g"}])
    assert main(["verify", "--verifier", "nope", data]) == 2
    assert main(["verify", "--verifier", "format", "--option", "template=bad", data]) == 2
    assert main(["verify", "--verifier", "format", "--option", "template=boxed", "--option", "colour=red", data]) == 2
    assert main(["verify", "--verifier", "format", data]) == 2
    assert main(["verify", "--verifier", "code", "--option", "template=boxed", data]) == 2
    assert main(["verify", "--verifier", "math", "--option", "extract=[\"nope\"]", data]) == 2
    assert main(["verify", "--verifier", "format", "--option", "template=boxed", str(tmp_path / "missing.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "expected one of" in err and "--option template: Input should be 'none', 'think_answer' or 'boxed'" in err
    assert "--option colour: not a [reward] key" in err and "the format verifier checks the answer template" in err
    assert "applies to the verifiers math, exact, format, rubric, not verifier 'code'" in err
    assert "unknown answer extractor" in err and "no such file" in err and "Traceback" not in err


def test_the_verifiers_load_without_torch_or_transformers():
    """`rlvr verify` and the API build verifiers in a fresh interpreter with neither imported."""
    import subprocess
    import sys

    code = ("import sys\n"
            "from rlvr.rewards import CodeVerifier, ExactVerifier, FormatVerifier, InstructionVerifier, MathVerifier\n"
            "from rlvr.cli.verify_command import build_verifier\n"
            "v = build_verifier('math', {'template': 'think_answer'})\n"
            "assert v(response='<think>6*7</think><answer>42</answer>', gold='42').score == 1.0\n"
            "import rlvr.rewards.audit\n"
            "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_non_utf8_input_names_the_file_line_and_byte(tmp_path, capsys):
    from rlvr.cli.main import main

    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"response": "5", "gold": "5"}\n{"response": "\xff", "gold": "5"}\n')
    assert main(["verify", "--verifier", "exact", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"{path}:2" in err and "byte offset 45" in err, err
