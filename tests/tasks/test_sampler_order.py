"""The sampler keeps each epoch's shuffled order instead of reshuffling every step: its draws
equal those of the reshuffle-every-call rule it had, across epochs and a resume."""

from __future__ import annotations

import random

from rlvr.tasks import PromptSampler
from rlvr.types import Sample


def reshuffled(n: int, seed: int, epoch: int) -> list[int]:
    order = list(range(n))
    random.Random(seed * 1_000_003 + epoch).shuffle(order)
    return order


def expected_draws(n: int, seed: int, sizes: list[int], epoch: int = 0, index: int = 0) -> list[list[int]]:
    out = []
    for size in sizes:
        batch = []
        while len(batch) < size:
            if index >= n:
                epoch, index = epoch + 1, 0
            batch.append(reshuffled(n, seed, epoch)[index])
            index += 1
        out.append(batch)
    return out


def test_draws_equal_a_fresh_shuffle_per_call_across_epochs_and_a_resume():
    samples = [Sample(prompt=str(i), answer=str(i)) for i in range(23)]
    sizes = [5, 7, 4, 9, 6, 8, 3]  # crosses three epochs, mid-batch
    sampler = PromptSampler(samples, seed=4)
    got = [[int(s.prompt) for s in sampler.next_batch(k)] for k in sizes]
    assert got == expected_draws(23, 4, sizes)
    resumed = PromptSampler(samples, seed=4)
    resumed.next_batch(3)  # caches epoch 0's order, which the loaded state must not reuse
    resumed.load_state({"epoch": 2, "index": 11})
    assert [int(s.prompt) for s in resumed.next_batch(6)] == expected_draws(23, 4, [6], epoch=2, index=11)[0]
