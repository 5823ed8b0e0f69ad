"""Zero-variance filtering with refill (DAPO's dynamic sampling), on hand-made rounds: the step
gets exactly `prompts_per_step` groups with variance, at most `max_refill_rounds` extra rounds
run, and every dropped group is counted."""

from __future__ import annotations

from collections import Counter

from rlvr.config.schema import SamplingSection
from rlvr.orchestrate.dynamic_sampling import select_groups
from rlvr.types import Rollout, Sample, Scored

ROLLOUT = Rollout((1,), (2,), (-0.1,), "x", "stop")


def group(name: str, rewards: list[float]) -> list[Scored]:
    return [Scored(Sample(name, "1"), ROLLOUT, r, "") for r in rewards]


def rounds_of(*rounds):
    """A generate function that hands out the given rounds in turn and counts its calls."""
    calls = []

    def generate(n: int):
        calls.append(n)
        return [group(name, rewards) for name, rewards in rounds[len(calls) - 1]], Counter({"gen/calls": 1})

    return generate, calls


MIXED, FLAT = [0.0, 1.0], [1.0, 1.0]


def test_refill_takes_exactly_prompts_per_step_groups_with_variance():
    generate, calls = rounds_of([("a", MIXED), ("b", FLAT), ("c", FLAT)],
                                [("d", MIXED), ("e", MIXED), ("f", MIXED)])
    s = SamplingSection(prompts_per_step=3, group_size=2, zero_variance="refill", max_refill_rounds=4)
    groups, counts = select_groups(generate, s)
    assert [g[0].sample.prompt for g in groups] == ["a", "d", "e"]
    assert calls == [3, 3]
    # f had variance too, but the step is full: it is not trained on (nor counted as dropped)
    assert counts["groups/dropped"] == 2 and counts["sampling/extra_rounds"] == 1 and counts["gen/calls"] == 2


def test_refill_stops_after_max_refill_rounds_and_trains_on_what_it_found():
    flat_round = [("x", FLAT), ("y", FLAT)]
    generate, calls = rounds_of([("a", MIXED), ("b", FLAT)], flat_round, flat_round, flat_round)
    s = SamplingSection(prompts_per_step=2, group_size=2, zero_variance="refill", max_refill_rounds=2)
    groups, counts = select_groups(generate, s)
    assert len(calls) == 3 and counts["sampling/extra_rounds"] == 2
    assert [g[0].sample.prompt for g in groups] == ["a"] and counts["groups/dropped"] == 5


def test_a_step_without_any_variance_trains_on_its_first_round_and_says_so():
    generate, calls = rounds_of([("a", FLAT), ("b", FLAT)], [("c", FLAT), ("d", FLAT)])
    s = SamplingSection(prompts_per_step=2, group_size=2, zero_variance="refill", max_refill_rounds=1)
    groups, counts = select_groups(generate, s)
    assert [g[0].sample.prompt for g in groups] == ["a", "b"] and counts["groups/all_zero_variance"] == 1


def test_drop_keeps_only_the_groups_with_variance_and_never_refills():
    generate, calls = rounds_of([("a", MIXED), ("b", FLAT), ("c", [0.5, 0.5 + 1e-12])])
    s = SamplingSection(prompts_per_step=3, group_size=2, zero_variance="drop")
    groups, counts = select_groups(generate, s)
    assert [g[0].sample.prompt for g in groups] == ["a"] and calls == [3] and counts["groups/dropped"] == 2


def test_keep_returns_the_round_as_drawn():
    generate, _ = rounds_of([("a", FLAT), ("b", MIXED)])
    groups, counts = select_groups(generate, SamplingSection(prompts_per_step=2, group_size=2))
    assert [g[0].sample.prompt for g in groups] == ["a", "b"] and counts["groups/dropped"] == 0
