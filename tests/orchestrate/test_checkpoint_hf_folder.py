"""A run's checkpoint is a plain Hugging Face model folder (issue 10): `transformers` alone, in
a process that never imports rlvr, loads the weights and the run's tokenizer (chat template
included) from it and computes the logits rlvr's own loader gives."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import torch

from rlvr.config import load_config
from rlvr.engines.loading import load_model, load_tokenizer
from rlvr.orchestrate import train

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))  # `reward.function = "byo_reward:parity"`: a reward with variance on a random model
MESSAGES = [{"role": "system", "content": "Answer with the number only."}, {"role": "user", "content": "What is 3+4?"}]
# Run with `-I` (isolated: no PYTHONPATH, no user site); fails if anything imported rlvr.
PLAIN_LOAD = """
import json, sys, torch
from transformers import AutoModelForCausalLM, AutoTokenizer
ckpt, messages, out = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
tok = AutoTokenizer.from_pretrained(ckpt)
model = AutoModelForCausalLM.from_pretrained(ckpt).eval()
text = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
ids = tok(text, add_special_tokens=False, return_tensors="pt")["input_ids"]
with torch.no_grad():
    logits = model(input_ids=ids).logits
assert not any(m == "rlvr" or m.startswith("rlvr.") for m in sys.modules), "rlvr was imported"
torch.save({"text": text, "ids": ids, "logits": logits}, out)
"""


def test_a_checkpoint_loads_with_transformers_alone_and_gives_the_same_logits(tmp_path, bpe_models):
    data = tmp_path / "train.jsonl"
    data.write_text("".join(json.dumps({"messages": MESSAGES, "answer": str(i), "difficulty": i % 3}) + "\n" for i in range(8)))
    overrides = [f"run.output_dir={str(tmp_path / 'runs')!r}", 'run.name="hf"', f"model.path={str(bpe_models['qwen2'])!r}",
                 f"task.train_path={str(data)!r}", 'task.kind="datasets"', 'task.prompt_field="messages"',
                 "task.test_fraction=0.25",
                 'task.extra_fields=["difficulty"]', 'reward.function="byo_reward:parity"', "train.steps=2", "train.lr=1e-2", "sampling.prompts_per_step=2",
                 "sampling.group_size=4", "sampling.max_new_tokens=4", "eval.every=0", 'log.progress="none"']
    folder = train(load_config(REPO / "recipes" / "grpo.toml", overrides)).folder
    [ckpt] = sorted(folder.checkpoints.glob("step_*"))
    out = tmp_path / "plain.pt"
    subprocess.run([sys.executable, "-I", "-c", PLAIN_LOAD, str(ckpt), json.dumps(MESSAGES), str(out)],
                   check=True, cwd=tmp_path)
    plain = torch.load(out)
    run_tokenizer = load_tokenizer(bpe_models["qwen2"])
    assert plain["text"] == run_tokenizer.apply_chat_template(MESSAGES, tokenize=False, add_generation_prompt=True)
    row = json.loads(folder.samples.read_text().splitlines()[0])
    assert plain["text"] == row["prompt"]  # what the run sampled from
    assert row["source"].startswith(f"{data} row ")  # samples.jsonl names the file and row
    with torch.no_grad():
        ours = load_model(ckpt).eval()(input_ids=plain["ids"]).logits
        base = load_model(bpe_models["qwen2"]).eval()(input_ids=plain["ids"]).logits
    torch.testing.assert_close(plain["logits"], ours, rtol=0, atol=0)
    assert not torch.allclose(plain["logits"], base)  # the trained weights, not the starting model's
