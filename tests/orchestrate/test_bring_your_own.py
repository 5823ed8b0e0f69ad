"""Issue 10 end to end: a BPE tokenizer with a chat template, tiny random Qwen2 and Llama
models over it, a conversational parquet file with an extra column the reward function asks
for; GRPO steps, evaluation and a resume through `load_config` + `train` / `resume`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rlvr.config import load_config
from rlvr.orchestrate import resume, train

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))  # the reward is named by `reward.function = "byo_reward:parity"`
import byo_reward  # noqa: E402

KEYS = ["reward/mean", "loss/policy", "train/grad_norm", "policy/kl_ref"]


def write_messages_parquet(path: Path, n: int = 16) -> Path:
    rows = [{"messages": [{"role": "system", "content": "Answer with the number only."},
                          {"role": "user", "content": f"What is {10 + i}+{20 + i}?"}],
             "answer": str(30 + 2 * i), "difficulty": i % 3} for i in range(n)]
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def run(tmp_path: Path, model: Path, name: str, steps: int):
    data = tmp_path / "train.parquet"
    if not data.exists():
        write_messages_parquet(data)
    overrides = [f"run.output_dir={str(tmp_path / 'runs')!r}", f"run.name={name!r}", f"model.path={str(model)!r}",
                 'task.kind="datasets"', f"task.train_path={str(data)!r}", 'task.prompt_field="messages"',
                 'task.extra_fields=["difficulty"]', "task.test_fraction=0.25",
                 'reward.function="byo_reward:parity"', f"train.steps={steps}", "train.lr=1e-3",
                 "sampling.prompts_per_step=2", "sampling.group_size=4", "sampling.max_new_tokens=6",
                 "eval.every=1", "eval.size=4", "eval.samples=2", "eval.k=[1, 2]", "eval.max_new_tokens=6",
                 'log.progress="none"', "checkpoint.every=1"]
    return train(load_config(REPO / "recipes" / "grpo.toml", overrides))


@pytest.mark.parametrize("arch", ["qwen2", "llama"])
def test_grpo_trains_evaluates_and_resumes_on_a_bpe_chat_model(tmp_path, bpe_models, arch):
    byo_reward.CALLS.clear()
    whole = run(tmp_path, bpe_models[arch], "whole", 3)
    rows = whole.folder.read_metrics()
    assert [r["step"] for r in rows] == [1, 2, 3]
    assert all(0 <= r["eval/accuracy"] <= 1 for r in rows if "eval/accuracy" in r)
    assert sum("eval/accuracy" in r for r in rows) >= 3 and any("eval/pass@2" in r for r in rows)
    assert rows[2]["policy/kl_ref"] > 0  # the weights moved
    assert set(byo_reward.CALLS) == {0, 1, 2}  # the extra column reached the reward, as the file holds it
    sample = json.loads(whole.folder.samples.read_text().splitlines()[0])
    assert sample["prompt"].startswith("<|im_start|>system\nAnswer with the number only.<|im_end|>\n")
    assert sample["prompt"].endswith("<|im_start|>assistant\n")
    part = run(tmp_path, bpe_models[arch], "part", 2)
    resumed = resume(part.folder.path, ["train.steps=3"]).folder.read_metrics()
    assert [r["step"] for r in resumed] == [1, 2, 3]
    for a, b in zip(rows, resumed):  # step 3 after the resume is the uninterrupted run's
        for key in KEYS:
            assert a[key] == pytest.approx(b[key], rel=1e-5, abs=1e-7), (a["step"], key)
