"""reasoning-gym generators as rlvr Samples: seeded, disjoint splits, clear errors, rlvr's scoring."""

from __future__ import annotations

import logging

import pytest

from rlvr.errors import ConfigError, DatasetError
from rlvr.rewards import ExactVerifier, MathVerifier
from rlvr.names import NUMERIC_GYM_GENERATORS
from rlvr.tasks.reasoning_gym import generate, generator_names, gym_splits

reasoning_gym = pytest.importorskip("reasoning_gym")


def test_splits_are_seeded_and_disjoint_by_question():
    train, test = gym_splits(["basic_arithmetic", "spell_backward"], size=40, seed=3, test_size=20)
    again = gym_splits(["basic_arithmetic", "spell_backward"], size=40, seed=3, test_size=20)
    assert (train, test) == again
    assert not {s.prompt for s in train} & {s.prompt for s in test}
    assert len({s.prompt for s in train}) == len(train)  # no repeats within a split
    assert {s.source.split("/")[0] for s in train} == {"basic_arithmetic", "spell_backward"}
    other_seed = gym_splits(["basic_arithmetic"], size=40, seed=4, test_size=20)[0]
    assert [s.prompt for s in other_seed] != [s.prompt for s in train[:len(other_seed)]]


def test_gold_is_the_generator_answer():
    dataset = reasoning_gym.create_dataset("spell_backward", size=5, seed=7)
    samples = generate("spell_backward", 5, 7, "train")
    assert [(s.prompt, s.answer) for s in samples] == [(d["question"], d["answer"]) for d in dataset]


def test_repeated_items_are_dropped_and_said(caplog):
    # tower_of_hanoi's default configuration has few distinct puzzles: 200 items repeat some
    with caplog.at_level(logging.WARNING, logger="rlvr.tasks.reasoning_gym"):
        train, test = gym_splits(["tower_of_hanoi"], size=200, seed=0, test_size=50)
    assert len(train) < 200 and len({s.prompt for s in train}) == len(train)
    assert not {s.prompt for s in train} & {s.prompt for s in test}
    assert "dropped as repeated questions" in caplog.text


def test_unknown_generator_names_the_valid_ones_with_a_guess():
    with pytest.raises(ConfigError, match=r"unknown reasoning-gym generator 'basic_arithmetik' "
                                          r"\(did you mean 'basic_arithmetic'\?\); valid: .*chain_sum"):
        gym_splits(["basic_arithmetik"], size=5, seed=0, test_size=5)
    assert "composite" not in generator_names() and len(generator_names()) == 105


def test_the_numeric_generators_are_generators_and_math_scores_them():
    # the refusal of a non-numeric generator with the math verifier runs at load:
    # tests/config/test_coherence.py
    train, _ = gym_splits(["basic_arithmetic"], size=5, seed=0, test_size=5)
    assert all(MathVerifier()(response=f"\\boxed{{{s.answer}}}", gold=s.answer).score == 1.0 for s in train)
    assert NUMERIC_GYM_GENERATORS <= set(generator_names())


def test_generators_without_a_single_gold_answer_are_refused():
    with pytest.raises(DatasetError, match="'rush_hour' has no single gold answer"):
        generate("rush_hour", 3, 0, "train")


def test_stuffed_reply_scores_zero_here_but_gets_credit_from_reasoning_gym():
    dataset = reasoning_gym.create_dataset("basic_arithmetic", size=1, seed=1)
    entry = dataset[0]
    gold = entry["answer"]  # "-4" (5 - 3 - 6)
    stuffed = " ".join(str(int(gold) + d) for d in range(-3, 4))  # "-7 -6 -5 -4 -3 -2 -1"
    reply = f"<answer>{stuffed}</answer>"
    theirs = dataset.score_answer(reasoning_gym.utils.extract_answer(reply), entry)
    assert theirs == pytest.approx(len(gold) / len(stuffed)) and theirs > 0  # substring credit
    assert ExactVerifier()(response=reply, gold=gold).score == 0.0
    assert MathVerifier()(response=reply, gold=gold).score == 0.0
    honest = f"5 - 3 = 2, 2 - 6 = -4.\n<answer>{gold}</answer>"
    assert ExactVerifier()(response=honest, gold=gold).score == MathVerifier()(response=honest, gold=gold).score == 1.0
    assert dataset.score_answer(reasoning_gym.utils.extract_answer(honest), entry) == 1.0
