"""reasoning-gym's seeded generators (extra `gym`) as rlvr Samples with disjoint splits.

    train, test = gym_splits(["basic_arithmetic", "letter_counting"], size=1000, seed=0,
                             test_size=200)

Each generator makes `size` training items from `seed` and `test_size` test items from a
different seed (`seed + TEST_SEED_OFFSET`). Small generator configurations repeat items, within
one seed and across seeds, so both splits are deduplicated by question text and every test item
whose question is also a training question is dropped: the splits are disjoint, and may hold
fewer items than asked. How many were dropped is logged as a warning, never silently.

rlvr scores these items with its own verifiers, not reasoning-gym's `score_answer` (which pays
partial credit when the gold is a substring of the reply, so a reply stuffed with candidates
collects reward): `reward.verifier = "exact"` for any generator, or `"math"` for the numeric
ones in rlvr/names.py `NUMERIC_GYM_GENERATORS` (refused at load otherwise). Generators with no
single gold answer are refused.
"""

from __future__ import annotations

import difflib
import logging

from rlvr.errors import ConfigError, DatasetError
from rlvr.types import Sample

log = logging.getLogger(__name__)

TEST_SEED_OFFSET = 1_000_003
# "composite" mixes other generators and needs its own configuration.
UNSUPPORTED = frozenset({"composite"})


def _gym():
    try:
        import reasoning_gym
        from reasoning_gym.factory import DATASETS
    except ImportError:
        raise DatasetError(
            "task.kind = 'reasoning_gym' needs the reasoning-gym package: pip install 'rlvr[gym]'"
        ) from None
    return reasoning_gym, DATASETS


def generator_names() -> list[str]:
    """The generators rlvr can load, sorted."""
    return sorted(set(_gym()[1]) - UNSUPPORTED)


def check_names(names: list[str]) -> None:
    """ConfigError for an unknown generator, with a did-you-mean and the valid names (it needs
    the package; the rules on the names alone run at load: config/coherence.py)."""
    valid = generator_names()
    for name in names:
        if name not in valid:
            close = difflib.get_close_matches(name, valid, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"task.gym_tasks: unknown reasoning-gym generator {name!r}{hint}; "
                              f"valid: {', '.join(valid)}")


def generate(name: str, size: int, seed: int, split: str) -> list[Sample]:
    """`size` items of one generator as Samples, duplicates by question text removed."""
    reasoning_gym, _ = _gym()
    try:
        dataset = reasoning_gym.create_dataset(name, size=size, seed=seed)
    except (ValueError, AssertionError, TypeError) as e:
        raise DatasetError(f"reasoning-gym generator {name!r} (size {size}, seed {seed}): {e}") from None
    samples, seen = [], set()
    for index in range(size):
        item = dataset[index]
        if not isinstance(item["answer"], str) or not item["answer"].strip():
            raise DatasetError(f"reasoning-gym generator {name!r} has no single gold answer (item "
                               f"{index} answers {item['answer']!r}): rlvr cannot score it exactly")
        if item["question"] not in seen:
            seen.add(item["question"])
            samples.append(Sample(item["question"], item["answer"], f"{name}/{split}#{index}"))
    return samples


def gym_splits(names: list[str], *, size: int, seed: int, test_size: int) -> tuple[list[Sample], list[Sample]]:
    """(train, test) over the generators in `names`: per generator `size` train and `test_size`
    test items before deduplication; disjoint by question text (see the module docstring)."""
    check_names(names)
    train, test = [], []
    for name in names:
        train_items = generate(name, size, seed, "train")
        questions = {s.prompt for s in train_items}
        test_items = [s for s in generate(name, test_size, seed + TEST_SEED_OFFSET, "test")
                      if s.prompt not in questions]
        _warn_if_short(name, "train", len(train_items), size)
        _warn_if_short(name, "test", len(test_items), test_size)
        if not test_items:
            raise DatasetError(f"reasoning-gym generator {name!r}: every test item repeats a training "
                               f"question; its configuration is too small for disjoint splits")
        train += train_items
        test += test_items
    return train, test


def _warn_if_short(name: str, split: str, kept: int, asked: int) -> None:
    if kept < asked:
        log.warning("reasoning-gym %s: %d of %d %s items dropped as repeated questions (duplicates, "
                    "or test items also in train)", name, asked - kept, asked, split)
