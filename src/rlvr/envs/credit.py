"""Credit over an episode's turns: which advantage each policy token of a trajectory gets.

`trajectory` (the default) is GRPO over trajectories: one reward per episode (the hybrid rule
of rlvr.envs.scored), one advantage per episode from algo.advantage over the G episodes of the
task, the same on every policy token. The rows are left as they are here.

`per_turn` gives the tokens of turn k of episode i the normalised return from turn k on. With
the episode's step rewards r_1..r_T (r_T the terminal one: the task reward), w = env.step_weight
and gamma = env.turn_discount,

    G_{i,T} = r_T
    G_{i,k} = w * r_k + gamma * G_{i,k+1}            (k < T)
            = w * sum_{k <= t < T} gamma^(t-k) r_t + gamma^(T-k) r_T

so with gamma = 1 the first turn's return is the trajectory reward of `trajectory`. The
advantage compares returns of the same turn index within the task's group:

    A_{i,k} = (G_{i,k} - b_k) / s_k      over S_k = {episodes of the group that reached turn k}

where b_k and s_k are algo.baseline and algo.scale applied to {G_{j,k} : j in S_k} (group_mean
and group_std: GRPO's eq. of arXiv:2402.03300 §4.1.2, per turn index; a turn index that only
one episode reached gets 0, as a group of one does). Returns from different positions are not
pooled: a late turn's return is discounted more and is reached only by the episodes that did
not end earlier, so one baseline for all turns would mix unlike quantities.

A turn's tokens are its policy tokens and the observation after it (the loss mask drops the
observation's). A turn the environment never answered (cut at the token budget, or its step
raised or timed out) has reward 0; policy tokens after the last recorded turn (a step that
raised) form such a turn.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import torch

from rlvr import names
from rlvr.types import Scored

# (returns (N,) float64, group ids (N,) long) -> advantages (N,): algo.baseline then algo.scale
# (rlvr.algo.advantages.outcome_advantages, bound by the episode source: envs/ stands below algo/).
Normalise = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def _unset_normalise(returns: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    raise ValueError("TurnCredit needs its normalise (algo.baseline and algo.scale), none was given")


@dataclass(frozen=True)
class TurnCredit:
    """The options of per-turn credit: the hybrid weight w, the discount gamma, and the
    baseline-then-scale applied to each (group, turn index) set of returns."""

    step_weight: float = 0.0
    gamma: float = 1.0
    normalise: Normalise = _unset_normalise


def turn_spans(record: dict, n_tokens: int) -> list[int]:
    """Completion tokens per turn (policy then observation), in order; tokens after the last
    recorded turn are one more turn. Raises when the turns claim more tokens than there are."""
    spans = [t["policy_tokens"] + t["observation_tokens"] for t in record["turns"]]
    if sum(spans) > n_tokens:
        raise ValueError(f"the episode's turns hold {sum(spans)} tokens, its completion only {n_tokens}")
    if sum(spans) < n_tokens:
        spans.append(n_tokens - sum(spans))
    return spans


def turn_rewards(record: dict, n_turns: int, step_weight: float) -> list[float]:
    """Each turn's weighted reward: w * r_k for the answered turns before the last, r_T for the
    last answered one (the terminal reward), 0 for a turn no step answered."""
    steps = [float(r) for r in record["step_rewards"]]
    weighted = [step_weight * r for r in steps[:-1]] + steps[-1:]
    return weighted + [0.0] * (n_turns - len(weighted))


def turn_returns(rewards: list[float], gamma: float) -> list[float]:
    """G_k = rewards[k] + gamma * G_{k+1}, G past the end 0 (rewards already weighted)."""
    out, future = [], 0.0
    for r in reversed(rewards):
        future = r + gamma * future
        out.append(future)
    return out[::-1]


def per_turn_advantages(groups: list[list[Scored]], credit: TurnCredit) -> list[list[Scored]]:
    """Every row with `token_adv` set (one advantage per completion token) by the rule of the
    module docstring. Rows need their episode record (multi-turn episodes)."""
    returns, spans, keys = [], [], []  # per row: its turns' returns and spans; (group, turn) per return
    for g, group in enumerate(groups):
        for s in group:
            if s.episode is None:
                raise ValueError(f"per-turn credit needs episode rows; {s.sample.source or 'a row'} is single-turn")
            span = turn_spans(s.episode, len(s.rollout.completion_ids))
            g_k = turn_returns(turn_rewards(s.episode, len(span), credit.step_weight), credit.gamma)
            returns.append(g_k)
            spans.append(span)
            keys.extend((g, k) for k in range(len(g_k)))
    index = {key: i for i, key in enumerate(dict.fromkeys(keys))}
    flat = torch.tensor([x for g_k in returns for x in g_k], dtype=torch.float64)
    ids = torch.tensor([index[key] for key in keys], dtype=torch.long)
    adv = credit.normalise(flat, ids).tolist()
    out, at, row = [], 0, 0
    for group in groups:
        rows = []
        for s in group:
            turn_adv = adv[at:at + len(spans[row])]
            tokens = tuple(a for a, n in zip(turn_adv, spans[row]) for _ in range(n))
            rows.append(dataclasses.replace(s, token_adv=tokens))
            at, row = at + len(spans[row]), row + 1
        out.append(rows)
    return out


def credit_rule(kind: str, credit: TurnCredit) -> Callable[[list[list[Scored]]], list[list[Scored]]]:
    """env.credit -> what the episode source applies to its scored groups."""
    return CREDITS[kind](credit)


CREDITS: dict[str, Callable[[TurnCredit], Callable]] = names.ENV_CREDIT.bind({
    "trajectory": lambda credit: (lambda groups: groups),  # the batch chain's algo.advantage, per row
    "per_turn": lambda credit: (lambda groups: per_turn_advantages(groups, credit)),
}, table="CREDITS")
