"""Batches of `rlvr sft`: packing keeps attention inside each example, micro-batching keeps the
batch's loss, and the order is a function of (seed, position)."""

from __future__ import annotations

import torch

from rlvr.types import IGNORE, SFTExample as Example
from rlvr.train.sft_batches import ExampleOrder, Row, collate, next_batch, token_loss_sum


def example(ids, trained_from=1):
    return Example(list(ids), [IGNORE] * trained_from + list(ids[trained_from:]), "test")


EXAMPLES = [example([3, 4, 5, 6, 7]), example([8, 9, 10], 2), example([11, 12, 13, 14]), example([5, 6, 7, 8, 9, 10])]


def test_a_packed_row_has_the_loss_of_its_examples_one_by_one(tiny_model):
    tiny_model.eval()
    alone = [token_loss_sum(tiny_model, collate([Row((e,))], pad_id=0)) for e in EXAMPLES[:3]]
    packed, count = token_loss_sum(tiny_model, collate([Row(tuple(EXAMPLES[:3]))], pad_id=0))
    assert count == sum(n for _, n in alone) == 4 + 1 + 3
    assert torch.allclose(packed, sum(loss for loss, _ in alone), atol=1e-4)


def test_without_the_block_mask_a_packed_row_would_see_its_neighbours(tiny_model):
    """The check above can fail: plain causal attention over the packed row changes the loss."""
    tiny_model.eval()
    batch = collate([Row(tuple(EXAMPLES[:3]))], pad_id=0)
    leaky = {**batch, "attention_mask": torch.ones_like(batch["input_ids"])}
    alone = sum(token_loss_sum(tiny_model, collate([Row((e,))], pad_id=0))[0] for e in EXAMPLES[:3])
    assert not torch.allclose(token_loss_sum(tiny_model, leaky)[0], alone, atol=1e-3)


def test_padding_and_each_examples_first_token_are_never_trained():
    batch = collate([Row((EXAMPLES[0], EXAMPLES[1])), Row((EXAMPLES[2],))], pad_id=0)
    labels = batch["labels"]
    assert labels.shape == (2, 8)
    assert labels[0, 5].item() == IGNORE  # the second example's first token, after the first's last
    assert (labels[1, 4:] == IGNORE).all()  # padding
    assert batch["position_ids"][0].tolist() == [0, 1, 2, 3, 4, 0, 1, 2]
    assert batch["attention_mask"].shape == (2, 1, 8, 8) and not batch["attention_mask"][0, 0, 5, 4]


def test_packing_fills_rows_up_to_max_length_and_the_order_resumes():
    order = ExampleOrder(len(EXAMPLES), seed=3)
    rows, after = next_batch(EXAMPLES, order, 0, rows=3, max_length=9, packing=True)
    assert all(r.length <= 9 for r in rows) and len(rows) == 3
    assert sum(len(r.examples) for r in rows) == after  # each example drawn once
    again, _ = next_batch(EXAMPLES, ExampleOrder(len(EXAMPLES), seed=3), after, rows=2, max_length=9, packing=True)
    straight, _ = next_batch(EXAMPLES, order, after, rows=2, max_length=9, packing=True)
    assert again == straight
    epoch = [order.index(p) for p in range(4)]
    assert sorted(epoch) == [0, 1, 2, 3] and epoch != [order.index(p) for p in range(4, 8)]
