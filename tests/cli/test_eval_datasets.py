"""`rlvr eval --task datasets:PATH` / `--task datasets`: the parquet files training reads, with
chat-message prompts rendered by the model's template, extra columns reaching the reward
function, the recipe's held-out rows, and one-line errors (issue 10)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rlvr.cli.main import main

REPO = Path(__file__).resolve().parents[2]
REWARD = '''
CALLS = []

def reward(response, gold, difficulty):
    CALLS.append((gold, difficulty))
    return 0.5
'''
QUICK = ["--n", "2", "--k", "1,2", "--max-new-tokens", "3", "--temperature", "1.0"]


def write_parquet(path: Path, n: int = 8) -> Path:
    rows = [{"messages": [{"role": "system", "content": "Answer with the number only."},
                          {"role": "user", "content": f"What is {10 + i}+{20 + i}?"}],
             "answer": str(30 + 2 * i), "difficulty": i % 3} for i in range(n)]
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


@pytest.fixture
def reward_module(tmp_path, monkeypatch):
    """A reward function that asks for the `difficulty` column, importable as evalds_reward:reward."""
    (tmp_path / "evalds_reward.py").write_text(REWARD)
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib
    import sys

    sys.modules.pop("evalds_reward", None)
    return importlib.import_module("evalds_reward")


@pytest.fixture
def engine_calls(monkeypatch):
    """[(prompts, stop_ids)] of every HFEngine.generate call."""
    from rlvr.engines.hf import HFEngine

    calls, real = [], HFEngine.generate

    def spy(self, prompts, n, params):
        calls.append((list(prompts), self.stop_ids))
        return real(self, prompts, n, params)

    monkeypatch.setattr(HFEngine, "generate", spy)
    return calls


def test_a_messages_parquet_is_rendered_and_its_extra_column_reaches_the_reward(
        tmp_path, bpe_models, bpe_tokenizer, reward_module, engine_calls):
    data = write_parquet(tmp_path / "train.parquet")
    out = tmp_path / "out"
    code = main(["eval", str(bpe_models["qwen2"]), "--task", f"datasets:{data}", "--prompt-field", "messages",
                 "--extra-fields", "difficulty", "--reward-function", "evalds_reward:reward", "--out", str(out),
                 *QUICK])
    assert code == 0
    prompts = [p for call in engine_calls for p in call[0]]
    assert len(prompts) == 8
    assert prompts[0] == ("<|im_start|>system\nAnswer with the number only.<|im_end|>\n"
                          "<|im_start|>user\nWhat is 10+20?<|im_end|>\n<|im_start|>assistant\n")
    # The engine stops on the template's end-of-turn token, not only EOS.
    assert bpe_tokenizer.convert_tokens_to_ids("<|im_end|>") in engine_calls[0][1]
    # Every sample was scored by the user's function, with the row's own difficulty value.
    assert sorted(reward_module.CALLS) == sorted((str(30 + 2 * i), i % 3) for i in range(8) for _ in range(2))
    results = json.loads((out / "results.json").read_text())
    assert results["model"]["prompts"] == 8 and results["settings"]["task"] == f"datasets:{data}"


def recipe(tmp_path: Path, model: Path, data: Path) -> Path:
    path = tmp_path / "byo.toml"
    path.write_text(f'[model]\npath = "{model}"\nchat_template = "auto"\n\n'
                    f'[task]\nkind = "datasets"\ntrain_path = "{data}"\nprompt_field = "messages"\n'
                    f'extra_fields = ["difficulty"]\ntest_fraction = 0.25\nseed = 3\n\n'
                    f'[reward]\nfunction = "evalds_reward:reward"\n\n[eval]\nmax_new_tokens = 3\n')
    return path


def test_task_datasets_evaluates_the_rows_training_held_out(tmp_path, bpe_models, reward_module, engine_calls):
    from rlvr.config import load_config
    from rlvr.orchestrate.components import load_task

    data = write_parquet(tmp_path / "train.parquet", n=12)
    rec = recipe(tmp_path, bpe_models["llama"], data)
    held_out = load_task(load_config(rec), REPO)[1]
    code = main(["eval", str(bpe_models["llama"]), "--task", "datasets", "--recipe", str(rec),
                 "--out", str(tmp_path / "out"), "--n", "2", "--k", "1,2"])
    assert code == 0
    assert [p for call in engine_calls for p in call[0]] == [s.prompt for s in held_out]
    assert len(held_out) == 3 and {c[0] for c in reward_module.CALLS} == {s.answer for s in held_out}


def test_a_template_file_renders_the_prompts_and_sets_the_stop(tmp_path, bpe_models, bpe_tokenizer, engine_calls):
    # A template whose turns end with <|endoftext|>... and whose generation prompt is plain text.
    template = tmp_path / "plain.jinja"
    template.write_text("{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}<|im_start|>\n{% endfor %}"
                        "{% if add_generation_prompt %}assistant: {% endif %}")
    data = write_parquet(tmp_path / "train.parquet", n=2)
    code = main(["eval", str(bpe_models["qwen2"]), "--task", f"datasets:{data}", "--prompt-field", "messages",
                 "--chat-template", str(template), "--out", str(tmp_path / "out"), *QUICK])
    assert code == 0
    assert engine_calls[0][0][0] == ("system: Answer with the number only.<|im_start|>\n"
                                     "user: What is 10+20?<|im_start|>\nassistant: ")
    stops = engine_calls[0][1]
    assert bpe_tokenizer.convert_tokens_to_ids("<|im_start|>") in stops
    assert bpe_tokenizer.convert_tokens_to_ids("<|im_end|>") not in stops  # the folder's template is replaced


def one_line_error(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    return err


def test_bad_input_is_one_line_naming_file_row_and_column(tmp_path, bpe_models, capsys):
    model = str(bpe_models["qwen2"])
    data = write_parquet(tmp_path / "train.parquet", n=3)
    base = ["eval", model, "--out", str(tmp_path / "out"), *QUICK]
    err = one_line_error(capsys, base + ["--task", f"datasets:{data}", "--prompt-field", "messages",
                                         "--chat-template", "none"])
    assert "model.chat_template = 'none'" in err and f"{data} row 0, column 'messages'" in err
    err = one_line_error(capsys, base + ["--task", f"datasets:{data}", "--prompt-field", "messages",
                                         "--answer-field", "anwser"])
    assert f"{data}: no column 'anwser'" in err and "did you mean 'answer'?" in err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"prompt": "1+1=", "answer": "2"}\n{"prompt": "2+2=", "answer": true}\n')
    err = one_line_error(capsys, base + ["--task", f"datasets:{bad}"])
    assert f"{bad} row 1, column 'answer'" in err and "got bool" in err
    err = one_line_error(capsys, base + ["--task", "datasets"])  # the default recipe trains arithmetic
    assert "task.kind = 'arithmetic'" in err and "datasets:PATH" in err
    err = one_line_error(capsys, base + ["--task", f"datasets:{data}", "--reward-function", "nosuchmod:f"])
    assert "--reward-function nosuchmod:f: cannot import 'nosuchmod'" in err


def test_a_reward_function_that_raises_names_the_row(tmp_path, bpe_models, capsys, monkeypatch):
    (tmp_path / "evalds_bad_reward.py").write_text("def reward(response, gold, difficulty):\n    return 1 / 0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    data = write_parquet(tmp_path / "train.parquet", n=2)
    err = one_line_error(capsys, ["eval", str(bpe_models["qwen2"]), "--task", f"datasets:{data}", "--prompt-field",
                                  "messages", "--extra-fields", "difficulty", "--reward-function",
                                  "evalds_bad_reward:reward", "--out", str(tmp_path / "out"), *QUICK])
    assert "ZeroDivisionError" in err and f"sample {data} row 0" in err
