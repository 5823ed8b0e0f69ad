"""The labelled-judgement format: every bad row names its file, line and field; the shipped set."""

from __future__ import annotations

import json

import pytest

from rlvr.errors import DatasetError
from rlvr.evaluate.judge_data import PairRow, PointRow, load_judge_set, shipped_set
from rlvr.rewards import MathVerifier


def write(tmp_path, *rows) -> str:
    path = tmp_path / "judge.jsonl"
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return str(path)


GOOD = {"prompt": "1+1=", "response": "2", "label": 1}


def test_both_kinds_load_with_their_optional_fields(tmp_path):
    data = load_judge_set(write(tmp_path, {**GOOD, "gold": 2, "judge_p_yes": 0.75, "id": 7},
                                {"prompt": "q", "chosen": "a", "rejected": "b", "reference": "a",
                                 "judge_p_chosen_first": 1, "judge_p_rejected_first": 0.0}))
    assert data.points == (PointRow(f"{tmp_path}/judge.jsonl:1", "1+1=", "2", 1, gold="2", id=7, p_yes=0.75),)
    assert isinstance(data.pairs[0], PairRow) and data.pairs[0].p_chosen_first == 1.0


@pytest.mark.parametrize("row, message", [
    ({"prompt": "1+1=", "response": "2"}, ":2: missing field 'label'"),
    ({**GOOD, "label": 2}, ":2: field 'label' must be 0 or 1, got 2"),
    ({**GOOD, "label": True}, ":2: field 'label' must be 0 or 1"),
    ({**GOOD, "judge_p_yes": 1.5}, ":2: field 'judge_p_yes' must be a probability in [0, 1]"),
    ({**GOOD, "response": 3}, ":2: field 'response' must be a string, got int"),
    ({**GOOD, "prompt": " "}, ":2: field 'prompt' must not be empty"),
    ({**GOOD, "gold": ""}, ":2: field 'gold' must be a non-empty string or a number"),
    ({**GOOD, "chosen": "x"}, ":2: a row is pointwise (response, label) or pairwise"),
    ({"prompt": "q", "chosen": "a"}, ":2: missing field 'rejected'"),
    ({**GOOD, "lable": 1}, ":2: unknown field"),
    ("{not json", ":2: not valid JSON"),
])
def test_a_bad_row_names_file_line_and_field(tmp_path, row, message):
    path = write(tmp_path, GOOD, row)
    with pytest.raises(DatasetError, match=None) as e:
        load_judge_set(path)
    assert str(e.value).startswith(path) and message in str(e.value), str(e.value)


def test_an_empty_or_missing_file_is_refused(tmp_path):
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(DatasetError, match="no rows"):
        load_judge_set(tmp_path / "empty.jsonl")
    with pytest.raises(DatasetError, match="not found"):
        load_judge_set(tmp_path / "absent.jsonl")


def test_the_shipped_set_is_balanced_sourced_and_its_labels_match_the_verifier():
    data = load_judge_set(shipped_set())
    assert (len(data.points), len(data.pairs)) == (60, 20)
    assert sum(r.label for r in data.points) == 30
    assert all(r.source and r.gold for r in (*data.points, *data.pairs))
    assert {r.source.split(" ")[0] for r in data.points} == {"rlvr-arithmetic", "GSM8K-style", "MATH-style"}
    verify = MathVerifier()
    # the labels were written by hand; the verifier is a second, independent check of each
    wrong = [r.id for r in data.points if (verify(response=r.response, gold=r.gold).score >= 0.5) != r.label]
    wrong += [r.id for r in data.pairs if verify(response=r.chosen, gold=r.gold).score < 0.5
              or verify(response=r.rejected, gold=r.gold).score >= 0.5]
    assert wrong == []
