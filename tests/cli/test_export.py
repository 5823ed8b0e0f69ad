"""`rlvr export`: a checkpoint as a plain Hugging Face folder that transformers loads alone, with
the same logits as the checkpoint in training; LoRA adapters merged; the run's chat template."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from rlvr.cli.main import main
from rlvr.config import load_config
from rlvr.engines.loading import load_model, load_tokenizer
from rlvr.orchestrate import train

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "models" / "tiny-arith"
SMALL = ["train.steps=1", "train.lr=1e-3", "sampling.prompts_per_step=4", "sampling.group_size=4", "eval.size=0",
         "log.progress=none"]
IDS = torch.tensor([[1, 5, 9, 12, 3, 7, 2, 11]])


def trained(tmp_path, *extra):
    return train(load_config(REPO / "recipes" / "grpo.toml", [f"run.output_dir={tmp_path}", *SMALL, *extra])).folder


def logits(model) -> torch.Tensor:
    with torch.no_grad():
        return model(input_ids=IDS).logits


def test_export_of_a_run_folder_loads_without_rlvr_with_equal_logits(tmp_path, capsys):
    folder = trained(tmp_path, "model.chat_template=" + str(write_template(tmp_path)))
    out = tmp_path / "hf"
    assert main(["export", str(folder.path), str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    exported = AutoModelForCausalLM.from_pretrained(out)
    checkpoint = load_model(folder.checkpoints / "step_1")
    torch.testing.assert_close(logits(exported), logits(checkpoint), rtol=0, atol=0)
    assert not torch.equal(logits(exported), logits(load_model(TINY)))  # the trained weights, not the base's
    assert not (out / "state.pt").exists() and not (out / "manifest.json").exists()
    tok, base = AutoTokenizer.from_pretrained(out), load_tokenizer(TINY)
    assert tok("12+34=")["input_ids"] == base("12+34=")["input_ids"] and tok.eos_token_id == base.eos_token_id
    assert tok.chat_template == TEMPLATE  # the run's model.chat_template file travels with it


TEMPLATE = "{% for m in messages %}{{ m['content'] }}{% endfor %}{% if add_generation_prompt %}={% endif %}"


def write_template(tmp_path) -> Path:
    path = tmp_path / "plain.jinja"
    path.write_text(TEMPLATE)
    return path


def test_a_lora_checkpoint_exports_merged(tmp_path):
    pytest.importorskip("peft", reason="peft is not installed (optional extra `lora`)")
    from rlvr.config.schema import ModelSection
    from rlvr.train.lora import load_adapters, wrap_lora

    folder = trained(tmp_path, "model.lora_rank=4")
    step = folder.checkpoints / "step_1"
    out = tmp_path / "merged"
    assert main(["export", str(step), str(out)]) == 0
    assert not (out / "adapter_config.json").exists() and (out / "model.safetensors").is_file()
    exported = AutoModelForCausalLM.from_pretrained(out)
    # the unmerged policy as training held it: base + (alpha / r) B A on each target
    policy = wrap_lora(load_model(TINY), ModelSection(lora_rank=4), TINY, seed=0)
    load_adapters(policy, step)
    policy.eval()
    torch.testing.assert_close(logits(exported), logits(policy), rtol=1e-5, atol=1e-5)
    assert not torch.allclose(logits(exported), logits(load_model(TINY)), atol=1e-5)  # B moved off zero


def test_export_refuses_what_it_cannot_do_in_one_line(tmp_path, capsys):
    folder = trained(tmp_path)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("keep me")
    cases = [([str(folder.path), str(tmp_path / "full")], "already exists and is not an empty folder"),
             ([str(TINY), str(tmp_path / "a")], "not an rlvr checkpoint"),
             ([str(tmp_path / "nothing"), str(tmp_path / "b")], "not an rlvr checkpoint")]
    for argv, message in cases:
        assert main(["export", *argv]) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err
    assert (tmp_path / "full" / "x").read_text() == "keep me"
