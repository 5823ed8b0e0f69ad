"""The failure curriculum's mining, fresh tasks by feature and metrics (rlvr.envs.failures,
rlvr.envs.generator, orchestrate/task_generators.py, the worlds' generator), and a run whose
pool draws fresh games: it fails when the pool is removed (the base sampler's draw only)."""

from __future__ import annotations

import random
from pathlib import Path

from rlvr.config import load_config
from rlvr.envs.failures import FailurePool
from rlvr.envs.worlds import WORLDS
from rlvr.envs.worlds.env import WorldEnv
from rlvr.evaluate.episodes_eval import EpisodeOutcome, TaskEpisodes
from rlvr.orchestrate import train
from rlvr.orchestrate.episode_eval import success_by_feature
from rlvr.orchestrate.episode_source import curriculum_key, retire_solved
from rlvr.algo.curriculum import PassRateTracker
from rlvr.orchestrate.task_generators import ArithmeticGenerator, GuessNumberGenerator, task_generator
from rlvr.types import Sample
from tests.envs.test_failures import episode

REPO = Path(__file__).resolve().parents[2]


def product(a: int, b: int, i: int = 0) -> Sample:
    return Sample(f"{a}*{b}=", str(a * b), f"arithmetic#{i}")


def test_the_pool_records_the_generators_features_and_the_failing_test():
    pool = FailurePool(capacity=4, mix=0.5, generator=ArithmeticGenerator(10, 99, set()))
    report = {"repo": {"tests": {"t.py::a": True, "t.py::b": False, "t.py::c": None}}}
    pool.observe(3, [(product(23, 47), [episode(False, "answered", ("error: python raised",), report)])])
    f = next(iter(pool.entries.values()))
    assert f.features == {"op": "*", "a_last": "3"}  # from the generator, not Sample.extra (empty)
    assert (f.stop_reason, f.failing_call, f.failing_test, f.turn, f.since) == ("answered", "python", "t.py::b", 1, 3)
    assert pool.metrics(3)["failures/feature/a_last=3"] == 1 and pool.metrics(3)["failures/failing_test"] == 1


def test_draws_are_fresh_tasks_with_the_failed_features_never_the_failed_row():
    gen = ArithmeticGenerator(10, 99, held_out={"13*50="})
    pool = FailurePool(capacity=8, mix=1.0, generator=gen)
    failed = [product(23, 47, 1), product(40, 12, 2)]
    pool.observe(1, [(t, [episode(False)]) for t in failed])
    seen = []
    for step in range(20):
        drawn = pool.mix([product(11, 11, 9), product(12, 12, 8)], random.Random(step))
        assert pool.synthesized == 2 and pool.replayed == 0
        assert {tuple(sorted(gen.features(s).items())) for s in drawn} == {(("a_last", "3"), ("op", "*")),
                                                                          (("a_last", "0"), ("op", "*"))}
        seen += [s.prompt for s in drawn]
        pool.drawn_from = {}
    assert not {"23*47=", "40*12=", "13*50="} & set(seen)  # never the failed rows, never a held-out problem
    assert len(set(seen)) > 20  # fresh problems, not one new seed replayed


def test_the_mix_and_the_fresh_share_hold():
    pool = FailurePool(capacity=50, mix=0.25, generator=GuessNumberGenerator(1, 20), fresh=0.0)
    pool.observe(1, [(Sample("g", str(1 + i % 20), f"g#{i}"), [episode(False)]) for i in range(30)])
    drawn = pool.mix([Sample("g", "5", f"b#{i}") for i in range(8)], random.Random(0))
    assert len(drawn) == 8 and pool.replayed == 2 and pool.synthesized == 0  # round(0.25 * 8); fresh = 0 replays
    assert sum(s.source.startswith("b#") for s in drawn) == 6


def test_a_fresh_success_retires_its_failure_and_the_wait_is_measured():
    pool = FailurePool(capacity=8, mix=1.0, generator=GuessNumberGenerator(1, 20))
    pool.observe(2, [(Sample("g", "3", "g#0"), [episode(False)])])
    fresh = pool.mix([Sample("g", "9", "b#0")], random.Random(0))[0]
    assert fresh.source != "g#0" and pool.generator.features(fresh) == {"band": "0"}
    pool.observe(3, [(fresh, [episode(False)])])  # a failed sibling: an attempt, no new entry
    assert len(pool.entries) == 1 and next(iter(pool.entries.values())).attempts == 1
    assert pool.metrics(5)["failures/unsolved_steps_max"] == 3
    fresh = pool.mix([Sample("g", "9", "b#0")], random.Random(1))[0]
    pool.observe(7, [(fresh, [episode(True, "solved")])])
    assert not pool.entries and pool.metrics(7)["failures/retired_steps_mean"] == 5  # steps 2 -> 7


def test_every_shipped_generator_makes_what_it_is_asked_for():
    gens = [ArithmeticGenerator(10, 99, set()), GuessNumberGenerator(1, 20),
            *(WorldEnv(w, difficulty=2).task_generator() for w in WORLDS.values())]
    rows = [product(31, 12), Sample("g", "17", "g#1"), *(Sample("t", "", f"w#{i}") for i in range(3))]
    for gen, row in zip(gens, rows):
        want = gen.features(row)
        for k in range(5):
            assert gen.features(gen.generate(want, random.Random(k))) == want, type(gen).__name__


def test_a_world_row_plays_its_template_and_difficulty():
    gen = WorldEnv(WORLDS["ledger"], difficulty=1).task_generator()
    row = gen.generate({"template": "rebalance", "difficulty": "3"}, random.Random(0))
    env = WorldEnv(WORLDS["ledger"], difficulty=1)
    env.reset(row, 0)
    assert env.instance.solution_length == 3  # the row's difficulty over env.difficulty
    other = gen.generate({"template": "rebalance", "difficulty": "3"}, random.Random(1))
    assert other.source != row.source


def test_task_generator_by_task_kind_knows_the_held_out_split():
    config = load_config(REPO / "recipes" / "env_python_demo.toml", [])
    gen = task_generator(config)
    from rlvr.tasks.arithmetic import arithmetic_splits
    test = arithmetic_splits(seed=0, test_size=200, low=10, high=99, ops="*")[1]
    assert gen.held_out == {s.prompt for s in test}


def test_held_out_success_per_feature():
    won = EpisodeOutcome(1.0, True, 1, 0, "solved")
    lost = EpisodeOutcome(0.0, False, 5, 0, "max_turns")
    test = [Sample("g", "2", "a"), Sample("g", "3", "b"), Sample("g", "19", "c")]
    played = [TaskEpisodes("g", s.answer, s.source, (o,)) for s, o in zip(test, (won, lost, won))]
    m = success_by_feature(GuessNumberGenerator(1, 20), test, played)
    assert m == {"eval/env/success/band=0": 0.5, "eval/env/success/band=3": 1.0,
                 "eval/env/tasks/band=0": 2.0, "eval/env/tasks/band=3": 1.0}


def test_scalerl_on_episodes_retires_a_solved_game_by_prompt_and_gold():
    tracker = PassRateTracker(threshold=0.9)
    games = [Sample("g", "3", "a"), Sample("g", "4", "b")]  # one prompt, two games
    counts = __import__("collections").Counter()
    retire_solved(tracker, games, [episode(True)] * 2 + [episode(False), episode(True)], 2, counts)
    assert tracker.is_retired(curriculum_key(games[0])) and not tracker.is_retired(curriculum_key(games[1]))
    assert counts["curriculum/retired_now"] == 1


def test_a_run_draws_fresh_games_from_its_failures(tmp_path):
    config = load_config(REPO / "recipes" / "env_guess_number.toml", [
        f"run.output_dir={tmp_path}", "train.steps=2", "sampling.prompts_per_step=4", "sampling.group_size=2",
        "log.progress=none", "checkpoint.every_minutes=0", "eval.size=0", 'env.curriculum="failures"',
        "env.failure_mix=0.5"])
    rows = train(config).folder.read_metrics()
    assert rows[0]["env/failures/pool_size"] > 0  # the untrained model loses most games
    assert rows[1]["env/failures/synthesized"] == min(2, rows[0]["env/failures/pool_size"])
    assert rows[1]["env/failures/replayed"] == 0
