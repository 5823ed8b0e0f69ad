"""Draws prompts for each step: a fresh seeded shuffle per epoch, resumable from (epoch, index)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable

from rlvr.errors import DatasetError, RlvrError
from rlvr.types import Sample


def check_batch_fits(n_samples: int, prompts_per_step: int) -> None:
    """DatasetError when a step's prompts cannot all be distinct."""
    if n_samples == 0:
        raise DatasetError("the training set is empty: nothing to sample")
    if prompts_per_step > n_samples:
        raise DatasetError(f"sampling.prompts_per_step = {prompts_per_step} is above the {n_samples} training "
                           f"prompts: a step would repeat prompts; lower it to at most {n_samples} "
                           f"(or use sampling.group_size for more samples per prompt)")


@dataclass
class PromptSampler:
    samples: list[Sample]
    seed: int
    epoch: int = 0
    index: int = 0
    # (seed, epoch, size) -> that epoch's order: reshuffling every step cost ~3 ms at the
    # demo's 8,100 prompts (benchmarks/README.md, step overhead); the order is the same list
    _cached: tuple[tuple[int, int, int], list[int]] | None = field(default=None, repr=False, compare=False)

    def _order(self) -> list[int]:
        key = (self.seed, self.epoch, len(self.samples))
        if self._cached is None or self._cached[0] != key:
            order = list(range(len(self.samples)))
            random.Random(self.seed * 1_000_003 + self.epoch).shuffle(order)
            self._cached = (key, order)
        return self._cached[1]

    def next_batch(self, n: int, skip: Callable[[Sample], bool] | None = None) -> list[Sample]:
        """The next n samples, crossing into a new shuffled epoch when one runs out. Samples for
        which `skip` is true (e.g. prompts retired by a curriculum) are passed over.

        n above the number of samples is refused (DatasetError): the batch would hold a prompt
        twice, and its groups would not be independent draws (docs/tasks.md)."""
        check_batch_fits(len(self.samples), n)
        out: list[Sample] = []
        order = self._order()
        passed_over = 0
        while len(out) < n:
            if self.index >= len(order):
                self.epoch, self.index = self.epoch + 1, 0
                order = self._order()
            sample = self.samples[order[self.index]]
            self.index += 1
            if skip is not None and skip(sample):
                passed_over += 1
                if passed_over > len(self.samples):
                    raise RlvrError("every training prompt is retired by the curriculum; nothing left to sample")
                continue
            passed_over = 0
            out.append(sample)
        return out

    def state(self) -> dict[str, int]:
        return {"epoch": self.epoch, "index": self.index}

    def load_state(self, state: dict[str, int]) -> None:
        self.epoch, self.index = int(state["epoch"]), int(state["index"])
