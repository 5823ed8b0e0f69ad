"""The guess-the-number game: feedback, determinism by seed, the task's secret."""

from __future__ import annotations

import pytest

from rlvr.envs.guess_number import GuessNumberEnv, guess_number_samples
from rlvr.types import Sample


def play(sample: Sample, seed: int, guesses: list[str]) -> list[tuple]:
    env = GuessNumberEnv()
    out = [env.reset(sample, seed)]
    for g in guesses:
        r = env.step(g)
        out.append((r.observation, r.reward, r.done, r.stop_reason))
    return out


def test_feedback_and_solve():
    steps = play(Sample("p", "37"), 0, ["50", "I think 20", "no idea", "37"])
    assert steps[1:] == [("50 is too high: guess lower.", 0.0, False, None),
                         ("20 is too low: guess higher.", 0.0, False, None),
                         ("Answer with one whole number.", 0.0, False, None),
                         ("", 1.0, True, "solved")]


def test_same_seed_same_game_other_seed_other_game():
    blank = Sample("", "")
    guesses = [str(g) for g in range(1, 101, 7)]
    assert play(blank, 5, guesses) == play(blank, 5, guesses)
    secrets = set()
    for seed in range(10):
        env = GuessNumberEnv()
        env.reset(blank, seed)
        secrets.add(env.secret)
    assert len(secrets) > 5  # the seed picks the secret


def test_samples_are_fixed_by_their_seed():
    assert guess_number_samples(20, seed=3) == guess_number_samples(20, seed=3)
    assert guess_number_samples(20, seed=3) != guess_number_samples(20, seed=4)
    assert all(1 <= int(s.answer) <= 100 for s in guess_number_samples(50, seed=0))


def test_a_non_integer_answer_names_the_sample():
    with pytest.raises(ValueError, match="games.jsonl:4: guess-the-number answer must be an integer"):
        GuessNumberEnv().reset(Sample("p", "seven", "games.jsonl:4"), 0)
