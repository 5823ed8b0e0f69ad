"""The FP32 LM head: float32 logits from a bf16 model, computed (not cast) in float32."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch

from rlvr.engines.loading import load_model
from rlvr.models.precision import use_fp32_head
from rlvr.train.batching import collate
from rlvr.train.logprobs import completion_logits
from rlvr.types import Rollout

REPO_MODEL = Path(__file__).resolve().parents[2] / "models" / "tiny-arith"


def _batch(tokenizer):
    ids = tokenizer("12+34=", add_special_tokens=False)["input_ids"]
    done = tokenizer("46", add_special_tokens=False)["input_ids"]
    r = Rollout(prompt_ids=tuple(ids), completion_ids=tuple(done), logprobs=(0.0,) * len(done),
                text="46", finish_reason="length")
    return collate([r, r], torch.zeros(2), torch.tensor([0, 0]), tokenizer.eos_token_id)


def _reference_logits(model_bf16, batch):
    """Float64 head on the bf16 model's own hidden states: what an exact head would give."""
    hidden = {}
    head = model_bf16.get_output_embeddings()
    handle = head.register_forward_hook(lambda m, inp, out: hidden.setdefault("h", inp[0]))
    completion_logits(model_bf16, batch, share_prompts=False)  # one head call, on every position
    handle.remove()
    t = batch.completion_mask.shape[1]
    return (hidden["h"].double() @ head.weight.double().T)[:, :t, :]


@pytest.mark.parametrize("fp32_head", [True, False])
def test_head_dtype_follows_the_switch(tokenizer, fp32_head):
    model = load_model(REPO_MODEL, "bfloat16", fp32_head=fp32_head)
    logits = completion_logits(model, _batch(tokenizer))
    assert logits.dtype == (torch.float32 if fp32_head else torch.bfloat16)


def test_fp32_head_is_closer_to_exact_than_casting_bf16_logits(tokenizer):
    batch = _batch(tokenizer)
    fp32 = load_model(REPO_MODEL, "bfloat16", fp32_head=True)
    bf16 = load_model(REPO_MODEL, "bfloat16", fp32_head=False)
    exact = _reference_logits(fp32, batch)
    # the reference's forward (share_prompts=False): the same bf16 body, so only the head differs
    # (the shared-prompt forward rounds the bf16 body differently on some CPUs)
    err_fp32 = (completion_logits(fp32, batch, share_prompts=False).double() - exact).abs().max()
    err_cast = (completion_logits(bf16, batch, share_prompts=False).float().double() - exact).abs().max()
    assert err_fp32 < 1e-4 < err_cast


def test_state_dict_unchanged_and_deepcopy_keeps_the_head(tokenizer):
    model = load_model(REPO_MODEL, "bfloat16", fp32_head=False)
    keys = list(model.state_dict())
    use_fp32_head(model)
    assert list(model.state_dict()) == keys
    twin = copy.deepcopy(model)
    assert completion_logits(twin, _batch(tokenizer)).dtype == torch.float32
    # the copy's head reads the copy's weights, not the original's
    with torch.no_grad():
        twin.get_output_embeddings().weight.zero_()
    assert completion_logits(twin, _batch(tokenizer)).abs().max() == 0
    assert completion_logits(model, _batch(tokenizer)).abs().max() > 0


def test_float32_model_is_left_alone():
    model = load_model(REPO_MODEL, "float32", fp32_head=True)
    assert "forward" not in vars(model.get_output_embeddings())
