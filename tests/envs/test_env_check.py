"""`rlvr env check` (rlvr.envs.check): every shipped environment kind passes; a module-level
global is caught by the isolation check; the contract checks; parity's fidelity score."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
import sys
from contextlib import ExitStack
from pathlib import Path

import pytest

from rlvr import names
from rlvr.cli.main import main
from rlvr.envs.check import check_env, parity
from rlvr.envs.traces import Trace, random_traces
from rlvr.orchestrate.env_check_run import load_env
from rlvr.rewards.sandbox import bwrap_unavailable
from rlvr.types import Sample

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).parent))  # leaky_envs
sys.path.insert(0, str(REPO / "docs" / "examples"))  # kv_env, the tutorial's
import leaky_envs  # noqa: E402


def sql_case(tmp: Path) -> tuple[str, list[str]]:
    db = tmp / "shop.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE people (name TEXT, age INTEGER)")
        conn.executemany("INSERT INTO people VALUES (?, ?)", [("Ann", 34), ("Bob", 27)])
    rows = tmp / "q.jsonl"
    rows.write_text(json.dumps({"prompt": "How old is Bob?", "answer": "SELECT age FROM people WHERE name = 'Bob'"}))
    return "demo", ['env.kind="sql"', f'env.db_path="{db}"', 'task.kind="jsonl"', f'task.train_path="{rows}"',
                    "sampling.max_new_tokens=4"]


def kv_case(tmp: Path) -> tuple[str, list[str]]:
    rows = tmp / "kv.jsonl"
    rows.write_text("".join(json.dumps({"prompt": f"Store {v} under x.", "answer": str(v)}) + "\n" for v in (3, 4)))
    return str(REPO / "docs/examples/kv_env.toml"), [f'task.train_path="{rows}"', f'task.test_path="{rows}"']


def openenv_case(serve) -> tuple[str, list[str]]:
    if importlib.util.find_spec("openenv") is None:
        pytest.skip("openenv-core (extra openenv) is not installed")
    from rlvr.envs.guess_number import GuessNumberEnv
    from rlvr.envs.openenv_server import openenv_app

    return "env_guess_number", ['env.kind="openenv"', f'env.url="{serve(openenv_app(lambda: GuessNumberEnv(1, 20)))}"']


def emulated_case(serve) -> tuple[str, list[str]]:
    from fake_emulator import emulator_app

    return "env_guess_number", ['env.kind="emulated"', 'env.spec="guess the number"',
                                f'env.url="{serve(emulator_app())}/v1"']


@pytest.fixture(scope="module")
def serve():
    """serve(app) -> its URL, for the rest of the module (the remote kinds' servers)."""
    from openenv_servers import threaded

    with ExitStack() as stack:
        yield lambda app: stack.enter_context(threaded(app))


def shipped_case(kind: str, tmp: Path, serve=None) -> tuple[str, list[str]]:
    """A recipe (and overrides) that plays env.kind `kind`; every kind must have one."""
    if kind == "python_tool" and (why := bwrap_unavailable()) is not None:
        pytest.skip(f"bubblewrap cannot sandbox here: {why}")
    if kind in ("python_tool", "repo") and (why := bwrap_unavailable()) is not None:
        pytest.skip(f"bubblewrap cannot sandbox here: {why}")
    if kind == "textarena" and importlib.util.find_spec("textarena") is None:
        pytest.skip("textarena (extra envs) is not installed")
    return {"guess_number": lambda: ("env_guess_number", []),
            "python_tool": lambda: ("env_python_demo", []),
            "sql": lambda: sql_case(tmp),
            "single_turn": lambda: ("demo", ['env.kind="single_turn"', "env.max_total_tokens=64"]),
            "textarena": lambda: ("env_textarena_guess_number", []),
            "custom": lambda: kv_case(tmp),
            "repo": lambda: ("demo", ['env.kind="repo"', 'task.kind="repo"', "eval.size=0", "env.max_total_tokens=4096",
                                      "task.train_size=2", "task.test_size=2"]),
            "world": lambda: ("demo", ['env.kind="world"', 'env.world="ledger"', 'model.path="models/tiny-env"',
                                       "env.max_total_tokens=256", "env.distractors=2", "env.noise=0.3"]),
            "openenv": lambda: openenv_case(serve),
            "emulated": lambda: emulated_case(serve),
            }[kind]()


@pytest.mark.parametrize("kind", [k for k in names.ENV_KIND.names if k != "none"])
def test_every_shipped_environment_passes_the_check(kind, tmp_path, serve):
    recipe, overrides = shipped_case(kind, tmp_path, serve)
    under = load_env(recipe, overrides, n_tasks=8)
    try:
        e = under.config.env
        traces = random_traces(under.samples, 12, e.max_turns, 0, under.spec.tools)
        report = check_env(under.make_env, traces, max_tool_calls=e.max_tool_calls,
                           max_total_tokens=e.max_total_tokens, count_tokens=under.count_tokens)
    finally:
        under.spec.close()
    assert report.passed, report.problems
    assert report.determinism == report.isolation == 1.0 and report.steps > 0


def traces_of(n: int = 6) -> list[Trace]:
    return [Trace(Sample("", ""), i, ("a", "b", "c", "d")) for i in range(n)]


def test_a_module_level_global_is_caught_by_the_isolation_check():
    leaky = check_env(leaky_envs.LeakyEnv, traces_of())
    assert not leaky.passed and leaky.isolation < 1.0
    assert any(p.startswith("isolation: ") for p in leaky.problems), leaky.problems
    clean = check_env(leaky_envs.CleanEnv, traces_of())
    assert clean.passed and clean.isolation == 1.0, clean.problems


def test_runner_stop_names_and_exceptions_break_the_contract():
    traces = [Trace(Sample("", ""), 0, ("boom",)), Trace(Sample("", ""), 1, ("fine",))]
    report = check_env(leaky_envs.RunnerNamesEnv, traces)
    assert any("exceptions: 1 of 2 episodes raised (trace 0, step 1: RuntimeError: boom)" in p for p in report.problems)
    assert any("the runner's own names ['max_turns']" in p for p in report.problems)


def test_a_first_observation_with_no_room_for_a_turn_is_reported():
    # "Say anything." is 13 characters, counted as 13 tokens here
    report = check_env(leaky_envs.CleanEnv, traces_of(2), max_total_tokens=13, count_tokens=len)
    assert any(p.startswith("observation length: trace 0's first observation is 13 tokens") for p in report.problems)


def test_parity_scores_the_steps_where_both_implementations_agree():
    same = parity(leaky_envs.CleanEnv, leaky_envs.CleanEnv, traces_of(4))
    assert same.fidelity == 1.0 and same.first_mismatch is None
    # Each trace: the first observation and 3 steps (done at the 3rd); only step 2's reward differs.
    other = parity(leaky_envs.CleanEnv, leaky_envs.GenerousEnv, traces_of(4))
    assert other.steps == 16 and other.observation_match == 1.0
    assert other.reward_agreement == other.fidelity == pytest.approx(12 / 16)


def test_the_cli_passes_a_recipe_and_fails_a_leaky_environment(capsys, tmp_path):
    assert main(["env", "check", "env_guess_number", "--episodes", "6", "--json", str(tmp_path / "r.json")]) == 0
    assert json.loads((tmp_path / "r.json").read_text())["passed"] is True
    assert main(["env", "check", "leaky_envs:LeakyEnv", "--episodes", "6"]) == 1
    out = capsys.readouterr().out
    assert "FAILED" in out and "isolation:" in out
    assert main(["env", "check", "leaky_envs:CleanEnv", "--against", "leaky_envs:GenerousEnv", "--episodes", "4"]) == 0
    assert "parity against leaky_envs:GenerousEnv: fidelity" in capsys.readouterr().out
