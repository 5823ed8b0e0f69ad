"""The arithmetic generator's splits and the jsonl loader's errors."""

from __future__ import annotations

import pytest

from rlvr.errors import DatasetError
from rlvr.tasks import PromptSampler, arithmetic_splits, load_jsonl


def test_splits_are_disjoint_deterministic_and_correct():
    train, test = arithmetic_splits(seed=0, test_size=100)
    assert len(train) + len(test) == 90 * 90
    assert not {s.prompt for s in train} & {s.prompt for s in test}
    assert arithmetic_splits(seed=0, test_size=100)[1] == test
    assert arithmetic_splits(seed=1, test_size=100)[1] != test
    a, b = test[0].prompt.rstrip("=").split("+")
    assert int(test[0].answer) == int(a) + int(b)


@pytest.mark.parametrize("line, problem", [
    ('{"prompt": "x"', "not valid JSON"),
    ('["x", "1"]', "expected a JSON object"),
    ('{"prompt": "x"}', "missing field 'answer'"),
    ('{"prompt": "", "answer": "1"}', "'prompt' must be a non-empty string"),
    ('{"prompt": "x", "answer": null}', "'answer' must be a string or a number"),
    ('{"prompt": "x", "answer": "1", "anwser": 2}', "unknown field 'anwser'"),
])
def test_malformed_row_names_file_and_line(tmp_path, line, problem):
    path = tmp_path / "d.jsonl"
    path.write_text('{"prompt": "1+1=", "answer": 2}\n\n' + line + "\n")
    with pytest.raises(DatasetError) as e:
        load_jsonl(path)
    assert str(e.value).startswith(f"{path}:3: ") and problem in str(e.value)


def test_good_rows_load_and_empty_file_fails(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"prompt": "1+1=", "answer": 2}\n{"prompt": "p", "answer": "\\\\frac{1}{2}", "id": 5}\n')
    rows = load_jsonl(path)
    assert [(r.prompt, r.answer, r.source) for r in rows] == [
        ("1+1=", "2", f"{path}:1"), ("p", "\\frac{1}{2}", f"{path}:2")]
    empty = tmp_path / "e.jsonl"
    empty.write_text("\n")
    with pytest.raises(DatasetError, match="dataset is empty"):
        load_jsonl(empty)
    with pytest.raises(DatasetError, match="not found"):
        load_jsonl(tmp_path / "missing.jsonl")


def test_sampler_resumes_exactly():
    train, _ = arithmetic_splits(seed=0, test_size=100)
    a = PromptSampler(train[:50], seed=3)
    a.next_batch(37)
    state = a.state()
    expected = a.next_batch(40)  # crosses an epoch boundary
    b = PromptSampler(train[:50], seed=3)
    b.load_state(state)
    assert b.next_batch(40) == expected
