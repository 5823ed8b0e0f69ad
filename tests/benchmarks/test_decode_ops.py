"""benchmarks/decode_ops.py: the decoder it times is workload 1's at the middle of the
completion, its roofline counts are the hand-computed ones, the candidate attention computes
the path's, and an op re-built from profiled shapes runs the same product."""

from __future__ import annotations

import sys
from pathlib import Path

import torch

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

import decode_ops  # noqa: E402

from rlvr.engines import qwen2_decode  # noqa: E402


def test_the_decoder_is_workload_1_at_the_middle_of_the_completion():
    decoder, feed = decode_ops.decoder_at_mid()
    assert decoder.ids.shape == (64, 22) and feed.shape == (64,)
    assert decoder.filled == 22 + decode_ops.MID
    # the 8 prompts each fill 8 rows, in order, as HFEngine expands a shared prefill
    assert all(torch.equal(decoder.ids[8 * g], decoder.ids[8 * g + j]) for g in range(8) for j in range(8))
    assert not torch.equal(decoder.ids[0], decoder.ids[8])


def test_roofline_counts_by_hand():
    decoder, _ = decode_ops.decoder_at_mid()
    d, f, kv_dim, layers, rows, n = 256, 1024, 2 * 64, 4, 64, 22 + decode_ops.MID + 1
    per_layer = d * d + 2 * d * kv_dim + d * d + 3 * d * f  # q, k, v, o, gate, up, down
    linear = layers * per_layer + 128 * d  # and the tied head
    attention = rows * layers * 4 * 64 * 2 * 2 * n  # QK^T and AV over n keys, 4 heads of 64
    assert decode_ops.step_flops(decoder) == 2 * linear * rows + attention
    layer_params = layers * (per_layer + (d + 2 * kv_dim) + 2 * d)  # + the q/k/v biases and 2 norms
    cache = layers * 2 * rows * 2 * n * 64
    assert decode_ops.step_bytes(decoder) == 4 * (layer_params + 128 * d + cache)


def test_the_candidate_attention_computes_the_paths():
    decoder, feed = decode_ops.decoder_at_mid()
    other, _ = decode_ops.decoder_at_mid()
    decode_ops.ORIGINAL_ATTENTION = qwen2_decode.Qwen2Decoder._attention
    with torch.inference_mode():
        base = decoder.step(feed)
        patched = decode_ops.attention_by_bmm.__get__(other)
        other._attention = patched
        candidate = other.step(feed)
    assert (base - candidate).abs().max().item() <= 1e-5
    assert (base - base.mean(0)).abs().max().item() > 1e-3  # rows differ: the check is not vacuous


def test_rebuilt_gemm_has_the_profiled_shapes_and_the_same_product():
    kernels = decode_ops.rebuild("aten::addmm", [[512], [64, 256], [256, 512]], cache_len=86)
    outs = [fn() for fn in kernels.values()]
    assert all(o.shape == (64, 512) for o in outs)
    assert all(torch.allclose(outs[0], o, atol=1e-4) for o in outs[1:])
    assert decode_ops.gemm_flops("aten::mm", [[64, 256], [256, 2048]]) == 2 * 64 * 256 * 2048
    attention = decode_ops.rebuild("aten::scaled_dot_product_attention",
                                   [[64, 2, 2, 64], [64, 2, 55, 64], [64, 2, 55, 64], [64, 1, 1, 55]], cache_len=86)
    a, b = (fn() for fn in attention.values())
    assert torch.allclose(a.reshape(b.shape), b, atol=1e-5)
