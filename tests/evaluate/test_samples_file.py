"""Scoring already generated samples: grouping, and malformed rows failing with file:line."""

from __future__ import annotations

import json

import pytest

from rlvr.errors import DatasetError
from rlvr.evaluate.samples_file import load_samples
from rlvr.rewards import MathVerifier

VERIFY = MathVerifier()


def write(tmp_path, lines):
    path = tmp_path / "samples.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def row(prompt="1+1=", response="2", gold="2", **extra):
    return json.dumps({"prompt": prompt, "response": response, "gold": gold, **extra})


def test_rows_group_by_prompt_in_file_order(tmp_path):
    path = write(tmp_path, [row(), row("2+2=", "the answer is \\boxed{4}", 4), "",
                            row(response="3", logprob=-0.5), row("2+2=", "5", "4")])
    groups = load_samples(path, VERIFY, VERIFY.extract)
    assert [(g.prompt, g.n, g.correct) for g in groups] == [("1+1=", 2, 1), ("2+2=", 2, 1)]
    assert groups[1].members[0].answer == "4" and groups[1].gold == "4"
    assert groups[0].members[1].mean_logprob == -0.5 and groups[0].members[0].mean_logprob is None
    assert groups[0].source == f"{path}:1"


@pytest.mark.parametrize("bad, message", [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "expected a JSON object"),
    (json.dumps({"prompt": "1+1=", "gold": "2"}), "missing field 'response'"),
    (row(extra_field=1), "unknown field 'extra_field'"),
    (row(response=5), "'response' must be a string"),
    (row(gold=""), "'gold' must be a non-empty string or a number"),
    (row(gold=True), "'gold' must be a non-empty string or a number"),
    (row(logprob=0.5), "'logprob' must be a number <= 0"),
    (row(gold="3"), "gold '3' differs from '2' given for the same prompt at"),
])
def test_malformed_row_names_file_and_line(tmp_path, bad, message):
    path = write(tmp_path, [row(), "", bad])
    with pytest.raises(DatasetError, match=message) as info:
        load_samples(path, VERIFY, VERIFY.extract)
    assert str(info.value).startswith(f"{path}:3: ")


def test_missing_and_empty_files(tmp_path):
    with pytest.raises(DatasetError, match="samples file not found"):
        load_samples(tmp_path / "nope.jsonl", VERIFY, VERIFY.extract)
    with pytest.raises(DatasetError, match="no samples"):
        load_samples(write(tmp_path, [""]), VERIFY, VERIFY.extract)


def test_a_non_utf8_samples_file_names_the_line_and_byte(tmp_path):
    from rlvr.errors import DatasetError
    from rlvr.evaluate.samples_file import load_samples

    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"prompt": "p", "response": "\xfe", "gold": "1"}\n')
    with pytest.raises(DatasetError, match=r"s\.jsonl:1: not valid UTF-8 \(byte 0xfe at byte offset 29"):
        load_samples(path, None, ("last_number",))
