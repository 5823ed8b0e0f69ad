"""benchmarks/decode_fusion.py: its rebuilt joined path computes what the split path does, its
copies are counted by hand, and a point runs every variant."""

from __future__ import annotations

import sys
from pathlib import Path

import torch

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

import decode_fusion  # noqa: E402

from rlvr.models import tiny_qwen2  # noqa: E402

SHAPE = dict(hidden_size=64, intermediate_size=96, num_layers=2, num_heads=4, num_kv_heads=2, vocab_size=128)


def test_the_joined_path_gives_the_split_paths_logits_and_its_copies_are_counted():
    torch.manual_seed(0)
    model = tiny_qwen2(**SHAPE).eval()
    ids, mask = torch.tensor([[0, 3, 4, 5], [6, 7, 8, 9]]), torch.tensor([[0, 1, 1, 1], [1, 1, 1, 1]])
    index = torch.tensor([0, 0, 1])
    _, split = decode_fusion.generation(model, ids, mask, index, 5, None)
    joined = decode_fusion.JoinedBlocks(model)
    _, other = decode_fusion.generation(model, ids, mask, index, 5, joined)
    assert split.shape == (5, 3, 128)
    torch.testing.assert_close(other, split, rtol=1e-5, atol=1e-5)
    # per layer: q|k|v (64 + 2 x 2 x 16 rows of 64) + gate|up (2 x 96 rows of 64), fp32
    assert joined.copies_mib() == 2 * (128 * 64 + 192 * 64) * 4 / 2 ** 20
    assert decode_fusion.JoinedBlocks(model, gate_up=False).copies_mib() == 2 * 128 * 64 * 4 / 2 ** 20


def test_a_point_times_every_variant(monkeypatch):
    monkeypatch.setitem(decode_fusion.POINTS, "tiny", (SHAPE, 2, 2, 3))
    r = decode_fusion.run_point("tiny", reps=1)
    assert set(r["over_split"]) == {"split", "joined", "joined-fresh", "qkv-only"}
    assert all(len(t) == 1 for t in r["times"].values()) and all(x > 0 for x in r["over_split"].values())
    assert r["max_logit_diff"] < 1e-4 and r["rows"] == 4
