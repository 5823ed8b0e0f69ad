"""HFEngine's shared prefill: rows with the same prompt are prefilled once and the prompt's KV
cache copied to each (`share_prefill=True`, the default), against prefilling every row.

The prefill then runs over fewer rows, so its GEMMs round differently (measured 2026-12-02 on
the workload's model: log-probs within 4.8e-7, tokens identical); the tests ask for the same
tokens, finish reasons and texts and log-probs within 1e-5, on both decode paths, and that the
sampling generators stay in step (the same number of draws)."""

from __future__ import annotations

import copy

import pytest
import torch

from rlvr.engines import HFEngine, SamplingParams
from rlvr.engines import qwen2_decode as qd
from rlvr.engines.hf import _ModelDecoder, distinct_rows, left_pad
from rlvr.errors import RlvrError
from rlvr.models import tiny_qwen2

PROMPTS = ["12+7=", "3+4=", "What is 40+2? Answer:", "9+9="]  # ragged: left padding matters
PARAMS = SamplingParams(max_new_tokens=12, temperature=1.0)


@pytest.fixture
def gqa_model():
    """WORKLOAD-shaped attention (4 heads / 2 KV heads, head_dim 64), 2 layers to stay fast."""
    return tiny_qwen2(hidden_size=256, intermediate_size=1024, num_layers=2, num_heads=4,
                      num_kv_heads=2, seed=7).eval()


def _prefill_rows(monkeypatch, cls) -> list[int]:
    """Record the batch size of every `cls.prefill()` call."""
    rows, original = [], cls.prefill

    def prefill(self):
        rows.append(self.ids.shape[0])
        return original(self)
    monkeypatch.setattr(cls, "prefill", prefill)
    return rows


def _assert_same(a, b):
    for ra, rb in zip(a, b, strict=True):
        assert ra.prompt_ids == rb.prompt_ids and ra.completion_ids == rb.completion_ids
        assert ra.logprobs == pytest.approx(rb.logprobs, abs=1e-5)
        assert (ra.text, ra.finish_reason) == (rb.text, rb.finish_reason)


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "generic"])
@pytest.mark.parametrize("which", ["tiny_model", "gqa_model"])
def test_shared_prefill_gives_the_unshared_rollouts(which, fast, tokenizer, request, monkeypatch):
    model = request.getfixturevalue(which)
    shared = HFEngine(copy.deepcopy(model), tokenizer, seed=5, fast_decode=fast)
    unshared = HFEngine(copy.deepcopy(model), tokenizer, seed=5, fast_decode=fast, share_prefill=False)
    rows = _prefill_rows(monkeypatch, qd.Qwen2Decoder if fast else _ModelDecoder)
    a = shared.generate(PROMPTS, 4, PARAMS)
    b = unshared.generate(PROMPTS, 4, PARAMS)
    assert rows == [len(PROMPTS), 4 * len(PROMPTS)]  # one prefill row a prompt when shared
    _assert_same([r for g in a for r in g], [r for g in b for r in g])
    assert torch.equal(torch.rand(4, generator=shared.generator), torch.rand(4, generator=unshared.generator))


def test_repeated_rows_in_any_order_are_shared(gqa_model, tokenizer, monkeypatch):
    """generate_ids (the environment and serve paths) shares any repeated rows, not only a
    group's consecutive ones, and returns each row's rollout in the order given."""
    a_, b_, c_ = [5, 17, 40], [60], [8, 9, 10, 11, 12]
    given = [a_, b_, a_, c_, b_, a_]
    shared = HFEngine(copy.deepcopy(gqa_model), tokenizer, seed=2)
    unshared = HFEngine(copy.deepcopy(gqa_model), tokenizer, seed=2, share_prefill=False)
    rows = _prefill_rows(monkeypatch, qd.Qwen2Decoder)
    got, want = shared.generate_ids(given, PARAMS), unshared.generate_ids(given, PARAMS)
    assert rows == [3, 6]
    assert [list(r.prompt_ids) for r in got] == given
    _assert_same(got, want)


def test_distinct_rows():
    distinct, index = distinct_rows([[1, 2], [3], [1, 2], [3], [4]])
    assert distinct == [[1, 2], [3], [4]] and index.tolist() == [0, 1, 0, 1, 2]
    rows = [[1], [2]]
    assert distinct_rows(rows) == (rows, None)  # nothing to share: no copy, no index


def test_expand_after_a_step_is_a_clear_error(gqa_model):
    ids, mask = left_pad([[5, 6], [7]], 0)
    with torch.inference_mode():
        decoder = qd.Qwen2Decoder(gqa_model, ids, mask, 4)
        decoder.step(decoder.prefill().argmax(-1))
        with pytest.raises(RlvrError, match="right after prefill"):
            decoder.expand(torch.tensor([0, 0, 1]))
