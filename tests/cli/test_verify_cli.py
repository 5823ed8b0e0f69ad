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
    assert main(["verify", "--verifier", "format", "--option", "colour=red", data]) == 2
    assert main(["verify", "--verifier", "format", str(tmp_path / "missing.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "expected one of" in err and "unknown format template" in err and "colour" in err
    assert "no such file" in err
