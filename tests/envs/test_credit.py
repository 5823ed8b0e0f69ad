"""Per-turn credit (rlvr.envs.credit): turn returns and their normalisation per turn index,
hand-computed; the rows' advantages reach the batch (orchestrate/batch_steps.py)."""

from __future__ import annotations

import functools

import pytest
import torch
from hypothesis import given, strategies as st

from rlvr.algo.advantages import outcome_advantages
from rlvr.envs.credit import TurnCredit, per_turn_advantages, turn_returns, turn_rewards, turn_spans
from rlvr.envs.scored import EpisodeScoring
from rlvr.orchestrate.batch_builder import BatchModels, BatchSpec, build_batch
from rlvr.types import Rollout, Sample, Scored

TASK = Sample("game", "7", "test#0")


def turn(policy: int, observation: int, reward: float) -> dict:
    return {"policy_tokens": policy, "observation_tokens": observation, "reward": reward}


def row(turns: list[dict], step_rewards: list[float], n_tokens: int | None = None) -> Scored:
    n = sum(t["policy_tokens"] + t["observation_tokens"] for t in turns) if n_tokens is None else n_tokens
    rollout = Rollout((1, 2), tuple(range(3, 3 + n)), (-0.5,) * n, "last", "stop", loss_mask=(1,) * n)
    return Scored(TASK, rollout, EpisodeScoring(0.5).reward(step_rewards), "done",
                  episode={"turns": turns, "step_rewards": step_rewards})


def credit(baseline="group_mean", scale="none", w=0.5, gamma=0.5) -> TurnCredit:
    return TurnCredit(step_weight=w, gamma=gamma,
                      normalise=functools.partial(outcome_advantages, baseline=baseline, scale=scale, eps=1e-4))


# A: 3 turns (2+3, 1+2, 2+0 tokens), step rewards 0.2, 0, 1 (solved at turn 3)
# B: 2 turns (1+1, 2+0), step rewards 0.4, 0 (ended at max_turns: 0 is its terminal reward)
# C: 1 turn (3+0), step reward 1 (solved at once)
GROUP = [row([turn(2, 3, 0.2), turn(1, 2, 0.0), turn(2, 0, 1.0)], [0.2, 0.0, 1.0]),
         row([turn(1, 1, 0.4), turn(2, 0, 0.0)], [0.4, 0.0]),
         row([turn(3, 0, 1.0)], [1.0])]


def test_turn_returns_by_hand():
    # w = 0.5, gamma = 0.5. A: weighted rewards 0.1, 0, 1 -> G3 = 1, G2 = 0 + 0.5*1 = 0.5,
    # G1 = 0.1 + 0.5*0.5 = 0.35. B: 0.2, 0 -> G2 = 0, G1 = 0.2. C: G1 = 1.
    a = turn_returns(turn_rewards(GROUP[0].episode, 3, 0.5), 0.5)
    b = turn_returns(turn_rewards(GROUP[1].episode, 2, 0.5), 0.5)
    assert a == pytest.approx([0.35, 0.5, 1.0]) and b == pytest.approx([0.2, 0.0])


def test_advantages_compare_returns_of_the_same_turn_index():
    # Turn 1: returns 0.35, 0.2, 1.0, mean 31/60 -> -1/6, -19/60, 29/60.
    # Turn 2: A and B reached it: 0.5, 0.0, mean 0.25 -> +0.25, -0.25.
    # Turn 3: only A reached it: a group of one -> 0.
    [a, b, c] = per_turn_advantages([GROUP], credit())[0]
    assert a.token_adv == pytest.approx([-1 / 6] * 5 + [0.25] * 3 + [0.0] * 2)
    assert b.token_adv == pytest.approx([-19 / 60] * 2 + [-0.25] * 2)
    assert c.token_adv == pytest.approx([29 / 60] * 3)


def test_the_scale_is_taken_per_turn_index():
    # Turn 2 with group_std: 0.5 and 0 have unbiased std sqrt(0.125) = 0.35355 -> +-0.25 / (0.35355 + 1e-4).
    [a, b, _] = per_turn_advantages([GROUP], credit(scale="group_std"))[0]
    assert a.token_adv[5] == pytest.approx(0.25 / (0.125 ** 0.5 + 1e-4)) and b.token_adv[2] == -a.token_adv[5]


def test_groups_are_normalised_apart():
    # The same rows as a second group, with every reward doubled: its advantages double, the first's stay.
    doubled = [row(s.episode["turns"], [2 * r for r in s.episode["step_rewards"]]) for s in GROUP]
    first, second = per_turn_advantages([GROUP, doubled], credit())
    assert first[0].token_adv == pytest.approx(per_turn_advantages([GROUP], credit())[0][0].token_adv)
    assert second[2].token_adv == pytest.approx([2 * 29 / 60] * 3)


def test_unanswered_turns_and_tokens_after_the_last_turn_get_reward_0():
    # A turn cut at the budget is recorded with no step reward; a step that raised leaves its
    # policy tokens after the last recorded turn.
    record = {"turns": [turn(2, 1, 0.5), turn(3, 0, 0.0)], "step_rewards": [0.5]}
    assert turn_spans(record, 6) == [3, 3] and turn_spans(record, 8) == [3, 3, 2]
    assert turn_rewards(record, 3, 0.1) == [0.5, 0.0, 0.0]  # the last answered one is terminal: not weighted
    with pytest.raises(ValueError, match="hold 6 tokens, its completion only 5"):
        turn_spans(record, 5)


@given(st.lists(st.floats(-2, 2), min_size=1, max_size=6), st.floats(0, 1))
def test_undiscounted_first_turn_return_is_the_trajectory_reward(step_rewards, w):
    rewards = turn_rewards({"step_rewards": step_rewards}, len(step_rewards), w)
    assert turn_returns(rewards, 1.0)[0] == pytest.approx(EpisodeScoring(w).reward(step_rewards), abs=1e-9)


def test_single_turn_rows_are_refused():
    plain = Scored(TASK, Rollout((1,), (2,), (-0.5,), "x", "stop"), 1.0, "ok")
    with pytest.raises(ValueError, match="needs episode rows; test#0 is single-turn"):
        per_turn_advantages([[plain]], credit())


def test_the_batch_trains_on_the_rows_advantages():
    groups = per_turn_advantages([GROUP], credit())
    built = build_batch(groups, BatchSpec(), BatchModels(policy=None, reference=None, critic=None, pad_id=0))
    for i, s in enumerate(groups[0]):
        n = len(s.token_adv)
        assert built.batch.adv[i, :n].tolist() == pytest.approx(list(s.token_adv))
        assert built.batch.adv[i, n:].abs().sum() == 0
    # Without them the group advantage gives one value a row (here not the per-turn one).
    plain = build_batch([GROUP], BatchSpec(), BatchModels(policy=None, reference=None, critic=None, pad_id=0))
    assert torch.unique(plain.batch.adv[0, :10]).numel() == 1


def test_a_batch_where_only_some_rows_carry_advantages_is_refused():
    mixed = [[per_turn_advantages([GROUP], credit())[0][0], *GROUP[1:]]]
    with pytest.raises(ValueError, match="1 of 3 rows carry per-token advantages"):
        build_batch(mixed, BatchSpec(), BatchModels(policy=None, reference=None, critic=None, pad_id=0))
