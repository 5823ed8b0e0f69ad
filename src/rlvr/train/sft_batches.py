"""Examples → the batches of `rlvr sft`, in an order fixed by the seed and a position.

The order: epoch e is a permutation of the examples drawn with `random.Random(f"{seed}:{e}")`;
position p is example perm_{p // n}[p % n]. A batch is a function of (seed, position) alone,
so a resume that restores the position draws exactly the batches the run would have drawn.

Packing (`data.packing`): examples are laid end to end in a row of at most `max_length` tokens
(an example that does not fit starts the next row). Attention stays inside each example: the
row gets a (T, T) block-diagonal causal mask and position ids that restart at 0 with each
example, so a packed row's loss equals the sum of its examples' losses computed one by one
(tests/train/test_sft_batches.py).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch

from rlvr.types import IGNORE, SFTExample as Example


@dataclass(frozen=True)
class Row:
    examples: tuple[Example, ...]

    @property
    def length(self) -> int:
        return sum(len(e.ids) for e in self.examples)


class ExampleOrder:
    def __init__(self, count: int, seed: int):
        self.count, self.seed, self._perms = count, seed, {}

    def index(self, position: int) -> int:
        epoch, offset = divmod(position, self.count)
        if epoch not in self._perms:
            self._perms = {epoch: random.Random(f"{self.seed}:{epoch}").sample(range(self.count), self.count)}
        return self._perms[epoch][offset]


def next_batch(examples: list[Example], order: ExampleOrder, position: int, rows: int, max_length: int,
               packing: bool) -> tuple[list[Row], int]:
    """`rows` rows from `position` on, and the position after them."""
    batch: list[Row] = []
    current: list[Example] = []
    while len(batch) < rows:
        example = examples[order.index(position)]
        if not packing:
            batch.append(Row((example,)))
        elif current and sum(len(e.ids) for e in current) + len(example.ids) > max_length:
            batch.append(Row(tuple(current)))
            current = []
            continue  # the example starts the next row
        else:
            current.append(example)
        position += 1
    return batch, position


def collate(rows: list[Row], pad_id: int) -> dict[str, torch.Tensor]:
    """input_ids, labels, position_ids (B, T); attention_mask (B, T), or (B, 1, T, T) when a row
    holds several examples (packing). T is the longest row; padding has label IGNORE."""
    width = max(r.length for r in rows)
    ids = torch.full((len(rows), width), pad_id)
    labels = torch.full((len(rows), width), IGNORE)
    positions = torch.zeros((len(rows), width), dtype=torch.long)
    documents = torch.full((len(rows), width), -1)
    for b, row in enumerate(rows):
        at = 0
        for d, example in enumerate(row.examples):
            n = len(example.ids)
            ids[b, at:at + n] = torch.tensor(example.ids)
            labels[b, at:at + n] = torch.tensor(example.labels)
            labels[b, at] = IGNORE  # nothing before it in its example predicts it
            positions[b, at:at + n] = torch.arange(n)
            documents[b, at:at + n] = d
            at += n
    batch = {"input_ids": ids, "labels": labels, "position_ids": positions}
    if any(len(r.examples) > 1 for r in rows):
        causal = torch.tril(torch.ones(width, width, dtype=torch.bool))
        same = (documents[:, :, None] == documents[:, None, :]) & (documents[:, :, None] >= 0)
        batch["attention_mask"] = (same & causal)[:, None]
    else:
        batch["attention_mask"] = (documents >= 0).long()
    return batch


def token_loss_sum(model, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, int]:
    """(sum of next-token cross-entropy over trained positions, their count) of one micro-batch.
    Labels shift by one: the token at t is predicted from positions < t of its own example."""
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                   position_ids=batch["position_ids"]).logits  # (B, T, V)
    targets = batch["labels"][:, 1:]  # (B, T-1)
    loss = torch.nn.functional.cross_entropy(logits[:, :-1].float().reshape(-1, logits.shape[-1]),
                                             targets.reshape(-1), ignore_index=IGNORE, reduction="sum")
    return loss, int((targets != IGNORE).sum())
