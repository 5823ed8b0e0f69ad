"""SFT rows → token examples: the loss trains on the assistant's tokens only, by the template's
own rendering, and every row that does not fit is counted by its stated rule."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from rlvr.errors import DatasetError
from rlvr.tasks.sft_rows import IGNORE, load_examples

DATA = SimpleNamespace(max_length=512, overlong="truncate", no_assistant="skip")


def write(tmp_path, rows, name="rows.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def trained_text(tokenizer, example) -> str:
    return tokenizer.decode([i for i, l in zip(example.ids, example.labels) if l != IGNORE])


def test_a_chat_row_trains_on_each_assistant_turn_and_nothing_else(tmp_path, bpe_tokenizer):
    messages = [{"role": "system", "content": "Answer with the number only."},
                {"role": "user", "content": "What is 12+34?"}, {"role": "assistant", "content": "46"},
                {"role": "user", "content": "12+30?"}, {"role": "assistant", "content": "42"}]
    (example,), counts = load_examples(write(tmp_path, [{"messages": messages}]), bpe_tokenizer, DATA)
    # ChatML: each assistant turn is "<content><|im_end|>\n" after "<|im_start|>assistant\n"
    assert trained_text(bpe_tokenizer, example) == "46<|im_end|>\n42<|im_end|>\n"
    whole = bpe_tokenizer.apply_chat_template(messages, tokenize=False)
    assert bpe_tokenizer.decode(example.ids) == whole  # the segments add up to the template's text
    assert counts.examples == 1 and counts.rows == 1


def test_prompt_completion_trains_on_the_completion_and_its_eos(tmp_path, bpe_tokenizer):
    (example,), _ = load_examples(write(tmp_path, [{"prompt": "12+34=", "completion": "46"}]), bpe_tokenizer, DATA)
    assert trained_text(bpe_tokenizer, example) == "46<|endoftext|>"
    assert bpe_tokenizer.decode(example.ids) == "12+34=46<|endoftext|>"


def test_rows_without_an_assistant_turn_are_skipped_and_counted_or_refused(tmp_path, bpe_tokenizer):
    rows = [{"messages": [{"role": "user", "content": "hi"}]},
            {"messages": [{"role": "user", "content": "1+1?"}, {"role": "assistant", "content": "2"}]}]
    path = write(tmp_path, rows)
    examples, counts = load_examples(path, bpe_tokenizer, DATA)
    assert len(examples) == 1 and counts.no_assistant == 1 and "row 0" in counts.reasons[0]
    with pytest.raises(DatasetError, match=r"row 0: no assistant turn"):
        load_examples(path, bpe_tokenizer, SimpleNamespace(**{**vars(DATA), "no_assistant": "fail"}))


def test_overlong_examples_follow_the_stated_rule(tmp_path, bpe_tokenizer):
    path = write(tmp_path, [{"prompt": "1+1=", "completion": "2"}, {"prompt": "12+34=" * 20, "completion": "46"}])
    short = lambda rule: SimpleNamespace(**{**vars(DATA), "max_length": 12, "overlong": rule})  # noqa: E731
    kept, counts = load_examples(path, bpe_tokenizer, short("drop"))
    assert len(kept) == 1 and counts.dropped_overlong == 1
    # truncated to 12 tokens, the long row is all prompt: nothing to train on, so it is left out too
    cut, counts = load_examples(path, bpe_tokenizer, short("truncate"))
    assert len(cut) == 1 and counts.truncated == 1 and counts.dropped_empty == 1
    with pytest.raises(DatasetError, match=r"row 1: \d+ tokens, more than data.max_length = 12"):
        load_examples(path, bpe_tokenizer, short("fail"))


def test_a_row_of_neither_form_names_the_file_and_its_columns(tmp_path, bpe_tokenizer):
    with pytest.raises(DatasetError, match=r"rows.jsonl: expected a 'messages' column.*its columns: question"):
        load_examples(write(tmp_path, [{"question": "x"}]), bpe_tokenizer, DATA)
    with pytest.raises(DatasetError, match=r"row 0, column 'messages': message 0 needs"):
        load_examples(write(tmp_path, [{"messages": [{"role": "user"}]}]), bpe_tokenizer, DATA)


def test_a_template_that_rewrites_earlier_turns_is_refused(tmp_path, bpe_tokenizer):
    # a template that drops earlier assistant turns (as some reasoning models' do with <think>)
    tok = bpe_tokenizer
    saved = tok.chat_template
    tok.chat_template = ("{% for m in messages %}{% if m['role'] != 'assistant' or loop.last %}"
                         "<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endif %}{% endfor %}"
                         "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
    rows = [{"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "1"},
                          {"role": "user", "content": "b"}, {"role": "assistant", "content": "2"}]}]
    try:
        with pytest.raises(DatasetError, match=r"renders an earlier turn differently"):
            load_examples(write(tmp_path, rows), tok, DATA)
    finally:
        tok.chat_template = saved
