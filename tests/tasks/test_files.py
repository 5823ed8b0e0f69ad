"""task.kind = "datasets": local files through the `datasets` library, chat-message prompts
rendered with the tokenizer's template, extra columns kept, one-line errors per bad row."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rlvr.config import load_config
from rlvr.errors import ConfigError, DatasetError
from rlvr.orchestrate.components import load_task
from rlvr.tasks.files import Columns, load_file

REPO = Path(__file__).resolve().parents[2]
SYSTEM = {"role": "system", "content": "Answer with the number only."}


def chat_rows(n: int = 6) -> list[dict]:
    return [{"messages": [SYSTEM, {"role": "user", "content": f"{10 + i}+{20 + i}="}], "answer": str(30 + 2 * i),
             "difficulty": i % 3} for i in range(n)]


def write_parquet(path: Path, rows: list[dict]) -> Path:
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def write_jsonl(path: Path, rows: list[dict | str]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def task_config(model: Path, train: Path, *extra: str):
    return load_config(None, [f"model.path={str(model)!r}", 'task.kind="datasets"', f"task.train_path={str(train)!r}",
                              'task.prompt_field="messages"', *extra])


def fake_render(messages, where):
    return " | ".join(f"{m['role']}: {m['content']}" for m in messages)


def test_a_messages_parquet_is_rendered_with_the_tokenizer_template(tmp_path, bpe_models):
    data = write_parquet(tmp_path / "train.parquet", chat_rows())
    config = task_config(bpe_models["qwen2"], data, 'task.extra_fields=["difficulty"]')
    train, test = load_task(config, REPO)
    assert test == [] and len(train) == 6
    first = train[0]
    assert first.prompt == ("<|im_start|>system\nAnswer with the number only.<|im_end|>\n"
                            "<|im_start|>user\n10+20=<|im_end|>\n<|im_start|>assistant\n")
    assert first.answer == "30" and first.extra == {"difficulty": 0}
    assert first.source == f"{data} row 0" and train[5].source == f"{data} row 5"


def test_a_template_file_replaces_the_tokenizer_template(tmp_path, bpe_models):
    data = write_parquet(tmp_path / "train.parquet", chat_rows(2))
    jinja = tmp_path / "plain.jinja"
    jinja.write_text("{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }}\n{% endfor %}ANSWER:")
    train, _ = load_task(task_config(bpe_models["qwen2"], data, f"model.chat_template={str(jinja)!r}"), REPO)
    assert train[0].prompt == "[system] Answer with the number only.\n[user] 10+20=\nANSWER:"


def test_auto_without_a_template_is_a_config_error_naming_the_key(tmp_path):
    data = write_parquet(tmp_path / "train.parquet", chat_rows(2))
    config = task_config(REPO / "models" / "tiny-arith", data)  # a character tokenizer, no template
    with pytest.raises(ConfigError, match=r"model.chat_template = 'auto': the tokenizer .* has no chat template, "
                                          r"but .*train.parquet row 0, column 'messages' holds chat messages"):
        load_task(config, REPO)
    with pytest.raises(ConfigError, match="model.chat_template = 'none', but .* holds chat messages"):
        load_task(task_config(REPO / "models" / "tiny-arith", data, 'model.chat_template="none"'), REPO)
    with pytest.raises(ConfigError, match="model.chat_template = 'missing.jinja': no such file"):
        load_task(task_config(REPO / "models" / "tiny-arith", data, 'model.chat_template="missing.jinja"'), REPO)


def test_plain_text_prompts_stay_as_they_are_and_load_no_tokenizer(tmp_path):
    rows = [{"question": f"{a}+1=", "gold": a + 1} for a in range(10)]
    data = write_jsonl(tmp_path / "plain.jsonl", rows)
    config = load_config(None, ['model.path="no/such/model"', 'task.kind="datasets"', f"task.train_path={str(data)!r}",
                                'task.prompt_field="question"', 'task.answer_field="gold"', "task.test_fraction=0.3"])
    train, test = load_task(config, REPO)  # the missing model folder is never read: no messages here
    assert len(train) == 7 and len(test) == 3
    assert {s.prompt for s in train} | {s.prompt for s in test} == {r["question"] for r in rows}
    assert not {s.source for s in train} & {s.source for s in test}
    assert test[0].answer == str(int(test[0].prompt.split("+")[0]) + 1)  # numbers become their text
    again = load_task(config, REPO)[1]
    assert [s.source for s in again] == [s.source for s in test]  # task.seed fixes the split


def test_csv_and_arrow_files_load(tmp_path):
    csv = tmp_path / "t.csv"
    csv.write_text("prompt,answer,level\n1+1=,2,easy\n2+3=,5,hard\n")
    samples = load_file(csv, Columns(extra=("level",)), fake_render)
    assert [(s.prompt, s.answer, s.extra) for s in samples] == [("1+1=", "2", {"level": "easy"}),
                                                                 ("2+3=", "5", {"level": "hard"})]
    table = pa.Table.from_pylist([{"prompt": "4+4=", "answer": "8"}])
    arrow = tmp_path / "t.arrow"
    with pa.OSFile(str(arrow), "wb") as f, pa.ipc.new_stream(f, table.schema) as writer:
        writer.write_table(table)
    assert [(s.prompt, s.answer) for s in load_file(arrow, Columns(), fake_render)] == [("4+4=", "8")]


USER = {"role": "user", "content": "1+1="}
BAD_ROWS = [  # (rows of a jsonl file, the message expected for row 1)
    ([{"prompt": "a", "answer": "1"}, {"prompt": "   ", "answer": "1"}], r"row 1, column 'prompt': the prompt is empty"),
    ([{"prompt": "a", "answer": "1"}, {"prompt": "b", "answer": [1]}], r"row 1, column 'answer': the answer must be a string or a number, got list"),
    ([{"prompt": "a", "answer": "1"}, {"prompt": "b", "answer": True}], r"row 1, column 'answer': .* got bool"),
    ([{"prompt": "a", "answer": "1"}, {"prompt": "b"}], r"row 1, column 'answer': .* got null"),
    ([{"prompt": "a", "answer": "1"}, {"prompt": "b", "answer": ""}], r"row 1, column 'answer': the answer is empty"),
    ([{"prompt": [USER], "answer": "1"}, {"prompt": [], "answer": "1"}], r"row 1, column 'prompt': expected a non-empty list of messages"),
    ([{"prompt": [USER], "answer": "1"}, {"prompt": [{"role": "user"}], "answer": "1"}], r"row 1, column 'prompt': message 0 \(user\) has no string 'content'"),
    ([{"prompt": [USER], "answer": "1"}, {"prompt": [{"content": "x"}], "answer": "1"}], r"row 1, column 'prompt': message 0 has no 'role'"),
    ([{"prompt": [USER], "answer": "1"}, {"prompt": [USER, {"role": "assistant", "content": "2"}], "answer": "2"}],
     r"row 1, column 'prompt': the last message is the assistant's"),
]


@pytest.mark.parametrize("rows, message", BAD_ROWS)
def test_each_bad_row_is_one_line_with_file_row_and_column(tmp_path, rows, message):
    path = write_jsonl(tmp_path / "bad.jsonl", rows)
    with pytest.raises(DatasetError) as caught:
        load_file(path, Columns(), fake_render)
    text = str(caught.value)
    assert "\n" not in text and text.startswith(f"{path} ")
    assert caught.match(message)


def test_file_level_errors_name_the_file_and_the_column(tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", [{"prompt": "a", "answer": "1"}])
    with pytest.raises(DatasetError, match=r"no column 'anwser' \(task.answer_field\) \(did you mean 'answer'\?\)"):
        load_file(path, Columns(answer="anwser"), fake_render)
    with pytest.raises(DatasetError, match=r"no column 'level' \(task.extra_fields\); its columns: prompt, answer"):
        load_file(path, Columns(extra=("level",)), fake_render)
    with pytest.raises(ConfigError, match=r"task.extra_fields: 'gold' is .* a reward keyword"):
        load_file(path, Columns(extra=("gold",)), fake_render)
    with pytest.raises(DatasetError, match=r"t.txt: unknown dataset format '.txt'"):
        load_file(tmp_path / "t.txt", Columns(), fake_render)
    with pytest.raises(DatasetError, match=r"nothere.parquet: dataset file not found"):
        load_file(tmp_path / "nothere.parquet", Columns(), fake_render)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"prompt": "a", "answer": "1"}\n{"prompt": "b",\n')
    with pytest.raises(DatasetError, match=r"broken.jsonl: cannot read it as json \(.*\)$"):
        load_file(broken, Columns(), fake_render)


def test_split_settings_are_checked(tmp_path):
    data = write_jsonl(tmp_path / "t.jsonl", [{"prompt": "a", "answer": "1"}, {"prompt": "b", "answer": "2"}])
    base = ['task.kind="datasets"', f"task.train_path={str(data)!r}"]
    with pytest.raises(ConfigError, match="task.test_path and task.test_fraction both"):
        load_task(load_config(None, [*base, f"task.test_path={str(data)!r}", "task.test_fraction=0.5"]), REPO)
    with pytest.raises(ConfigError, match="task.test_fraction = 0.1 of the 2 rows .* leaves no test row"):
        load_task(load_config(None, [*base, "task.test_fraction=0.1"]), REPO)
    with pytest.raises(ConfigError, match="task.kind = 'datasets' needs task.train_path"):
        load_task(load_config(None, ['task.kind="datasets"']), REPO)
