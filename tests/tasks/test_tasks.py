"""The arithmetic generator's splits and the jsonl loader's errors."""

from __future__ import annotations

import pytest

from rlvr.errors import ConfigError, DatasetError
from rlvr.tasks import PromptSampler, arithmetic_splits, load_jsonl
from rlvr.tasks.jsonl import json_object


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
    ('["x", "1"]', "expected a JSON object, got an array"),
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


@pytest.mark.parametrize("line, problem", [
    (b'{"prompt": "caf\xe9", "answer": 1}', "not valid UTF-8 (byte 0xe9 at byte offset 48)"),  # 33 + 15
    (b'{"prompt": "\\ud800", "answer": 1}', "field 'prompt' holds a lone surrogate \\ud800 at character 0"),
    (b'{"prompt": "x", "answer": NaN}', "field 'answer' is NaN"),
    (b'{"prompt": "x", "answer": -Infinity}', "field 'answer' is -Infinity"),
    (b'{"prompt": "x", "answer": 1e400}', "field 'answer' is Infinity"),
    (b'{"prompt": "x", "answer": 1, "answer": 2}', "key 'answer' appears twice"),
    (b'{"prompt": "x", "answer": 1, "meta": {"a": 1, "a": 2}}', "key 'a' appears twice"),
    (b'{"prompt": "x", "answer": true}', "'answer' must be a string or a number, got a boolean"),
    (b'{"prompt": "x", "answer": 1, "id": false}', "'id' must be a string or an integer, got a boolean"),
    (b'{"prompt": "x", "answer": 1, "meta": {"k": [0, NaN]}}', "field 'meta.k[1]' is NaN"),
    (b'{"prompt": "x", "answer": ' + b"9" * 5000 + b"}", "not usable JSON (Exceeds the limit (4300 digits)"),
    (b"[" * 50_000 + b"]" * 50_000, "not usable JSON (nested too deeply)"),
])
def test_bad_values_name_the_line_and_field(tmp_path, line, problem):
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'{"prompt": "1+1=", "answer": 2}\n\n' + line + b"\n")  # line 3 starts at byte 33 (32 + 1 blank)
    with pytest.raises(DatasetError) as e:
        load_jsonl(path)
    assert str(e.value).startswith(f"{path}:3: ") and problem in str(e.value)
    assert "\n" not in str(e.value)


def test_byte_order_mark_and_bytes_rows_are_read():
    path_rows = json_object(b'{"prompt": "p", "answer": 1}', "w", ("prompt",), {"prompt", "answer"})
    assert path_rows == {"prompt": "p", "answer": 1}
    with pytest.raises(DatasetError, match=r"^w: not valid UTF-8 \(byte 0xff at byte offset 12\)"):
        json_object(b'{"prompt": "\xff"}', "w", ("prompt",), {"prompt"})


def test_bom_before_the_first_row_is_allowed(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"prompt": "1+1=", "answer": 2}\n{"prompt": "\xc3\xa9", "answer": 1.5}\n')
    assert [(r.prompt, r.answer) for r in load_jsonl(path)] == [("1+1=", "2"), ("\u00e9", "1.5")]
    with pytest.raises(DatasetError, match="cannot read the dataset file"):
        load_jsonl(tmp_path)  # a folder


@pytest.mark.parametrize("kwargs, problem", [
    (dict(test_size=8100), r"task.test_size = 8100: .* 8100 problems, so test_size must lie in 1 .. 8099"),
    (dict(test_size=5, low=3, high=2), "give 0 problems"),
    (dict(test_size=5, ops="/"), "task.ops = '/'"),
    (dict(test_size=5, ops="++"), "each at most once"),
])
def test_arithmetic_refuses_impossible_splits_with_a_config_error(kwargs, problem):
    with pytest.raises(ConfigError, match=problem):
        arithmetic_splits(seed=0, **kwargs)


def test_sampler_refuses_a_step_larger_than_the_dataset():
    train, _ = arithmetic_splits(seed=0, test_size=100)
    sampler = PromptSampler(train[:10], seed=0)
    assert len({s.prompt for s in sampler.next_batch(10)}) == 10  # a whole epoch, each prompt once
    with pytest.raises(DatasetError, match=r"prompts_per_step = 11 is above the 10 training prompts"):
        sampler.next_batch(11)
    with pytest.raises(DatasetError, match="training set is empty"):
        PromptSampler([], seed=0).next_batch(1)
