"""On-policy distillation: `model.teacher_path` replaces the KL reference by a teacher, and k2 in
the loss pulls the policy towards it on its own samples (reverse KL)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from rlvr.config import load_config
from rlvr.errors import ConfigError
from rlvr.orchestrate import train

REPO = Path(__file__).resolve().parents[2]
SMALL = ["sampling.prompts_per_step=4", "sampling.group_size=4", "eval.size=0", "log.progress=none"]


def perturbed_teacher(folder: Path, scale: float = 0.05, vocab: int | None = None) -> Path:
    """The shipped model with noise on every weight (or a random one of another vocabulary)."""
    from transformers import AutoModelForCausalLM, Qwen2Config, Qwen2ForCausalLM

    if vocab is not None:
        Qwen2ForCausalLM(Qwen2Config(vocab_size=vocab, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                     num_attention_heads=2, num_key_value_heads=1)).save_pretrained(folder)
        return folder
    model = AutoModelForCausalLM.from_pretrained(REPO / "models" / "tiny-arith")
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(scale * torch.randn(p.shape, generator=gen))
    model.save_pretrained(folder)
    return folder


def test_distillation_pulls_the_policy_towards_the_teacher(tmp_path):
    teacher = perturbed_teacher(tmp_path / "teacher")
    config = load_config(REPO / "recipes" / "grpo.toml", [
        f"run.output_dir={tmp_path}", "train.steps=8", "train.lr=3e-3", f"model.teacher_path={teacher}",
        "algo.kl=k2", "algo.kl_coef=5.0", *SMALL])
    kl = [row["policy/kl_ref"] for row in train(config).folder.read_metrics()]
    assert kl[0] > 0.01  # the teacher differs from the start
    assert kl[-1] < 0.5 * kl[0], kl


def test_teacher_needs_a_kl_term_and_the_same_tokenizer(tmp_path):
    import shutil

    with pytest.raises(ConfigError, match="model.teacher_path is the KL target"):
        load_config(REPO / "recipes" / "grpo.toml", ["model.teacher_path=x", "algo.kl=none", "algo.kl_coef=0"])
    small = perturbed_teacher(tmp_path / "small", vocab=16)  # the policy's tokenizer has 100+ tokens
    with pytest.raises(ConfigError, match="an embedding of 16 tokens"):
        train(load_config(REPO / "recipes" / "grpo.toml", [
            f"run.output_dir={tmp_path}", "train.steps=1", f"model.teacher_path={small}", *SMALL]))
    # A padded, larger embedding with the policy's own tokenizer files is fine (Qwen2.5's family)...
    padded = perturbed_teacher(tmp_path / "padded", vocab=300)
    for f in (REPO / "models" / "tiny-arith").glob("*token*"):
        shutil.copy(f, padded / f.name)
    train(load_config(REPO / "recipes" / "grpo.toml", [
        f"run.output_dir={tmp_path}", "run.name=padded", "train.steps=1", f"model.teacher_path={padded}", *SMALL]))
    # ...a tokenizer that maps tokens to other ids is not.
    vocab = (padded / "tokenizer.json").read_text().replace('"0": ', '"zero": ', 1)
    (padded / "tokenizer.json").write_text(vocab)
    with pytest.raises(ConfigError, match="maps tokens to other ids"):
        train(load_config(REPO / "recipes" / "grpo.toml", [
            f"run.output_dir={tmp_path}", "run.name=other", "train.steps=1", f"model.teacher_path={padded}", *SMALL]))
