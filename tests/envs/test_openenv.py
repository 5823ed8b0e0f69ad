"""env.kind = "openenv": a real OpenEnv server process (`rlvr env serve-openenv`, openenv-core's
server classes around guess-the-number) trained against for two steps and checked for parity
with the local env; a server down, slow or malformed ends only its episode with its own stop
reason, counted; over env.max_failure_rate the run stops with one line."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("openenv.core", reason="openenv-core (extra `openenv`) is not installed")

from rlvr.cli.main import main  # noqa: E402
from rlvr.config import load_config  # noqa: E402
from rlvr.engines.base import SamplingParams  # noqa: E402
from rlvr.envs import EpisodeLimits, EpisodeRunner, PlainRenderer  # noqa: E402
from rlvr.envs.guess_number import GuessNumberEnv  # noqa: E402
from rlvr.envs.openenv_env import OpenEnvEnv  # noqa: E402
from rlvr.envs.scored import episode_groups  # noqa: E402
from rlvr.envs.openenv_server import openenv_app  # noqa: E402
from rlvr.orchestrate import train  # noqa: E402
from rlvr.types import Sample  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from openenv_servers import FlakyEnv, SlowEnv, free_port, garbage_app, threaded  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SMALL = ["sampling.prompts_per_step=2", "sampling.group_size=4", "log.progress=none", "checkpoint.every_minutes=0",
         "train.steps=2", 'env.kind="openenv"']


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """`rlvr env serve-openenv env_guess_number` in its own process (its log in a file: a pipe
    nobody reads would fill and block the server)."""
    port, log = free_port(), tmp_path_factory.mktemp("openenv") / "server.log"
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "rlvr.cli.main", "env", "serve-openenv", "env_guess_number",
                                 "--port", str(port)], stdout=out, stderr=subprocess.STDOUT)
    url, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 120
    try:
        while True:
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "the OpenEnv server did not start in 120 s"
            try:
                urllib.request.urlopen(f"{url}/health", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


def run_config(tmp_path, url: str, *extra: str):
    return load_config(REPO / "recipes" / "env_guess_number.toml",
                       [f"run.output_dir={tmp_path}", "run.name=oe", *SMALL, f'env.url="{url}"', *extra])


def test_two_training_steps_against_a_real_openenv_server(server, tmp_path):
    folder = train(run_config(tmp_path, server)).folder
    rows = folder.read_metrics()
    assert [r["step"] for r in rows] == [1, 2]
    assert all(r["env/episodes"] == 8 and r["env/fault_rate"] == 0.0 for r in rows)
    samples = [json.loads(line) for line in folder.samples.read_text().splitlines()]
    turns = [t for s in samples for t in s["episode"]["turns"][:-1]]
    assert turns and all("too" in t["observation"] and t["observation_tokens"] > 0 for t in turns)


def test_the_served_env_replays_like_the_local_one(server, capsys, tmp_path):
    # parity: the same random traces on guess_number and on it behind OpenEnv agree on every step
    assert main(["env", "check", "env_guess_number", "--episodes", "6", "--against", "env_guess_number",
                 "--against-set", 'env.kind="openenv"', "--against-set", f'env.url="{server}"',
                 "--json", str(tmp_path / "r.json")]) == 0
    parity = json.loads((tmp_path / "r.json").read_text())["parity"]
    assert parity["fidelity"] == 1.0 and parity["steps"] > 6


@pytest.fixture
def play(scripted, char_tok):
    """n episodes of guess-the-number (secrets 1..n) by a policy that always guesses 1."""

    def run(make_env, n: int = 4):
        with EpisodeRunner(scripted(lambda row: "1"), PlainRenderer(char_tok), SamplingParams(max_new_tokens=4),
                           EpisodeLimits(max_turns=3)) as runner:
            return runner.run(make_env, [Sample("Guess 1..20", str(i + 1)) for i in range(n)], list(range(n)))

    return run


def mixed(bad_url: str, **timeouts):
    """Every other episode against `bad_url`, the others local: a fault must end only its own."""
    made = []

    def make():
        made.append(None)
        if len(made) % 2:
            return OpenEnvEnv(bad_url, **timeouts)
        return GuessNumberEnv(1, 20)

    return make


def assert_only_faulted(episodes, reason: str):
    faulted = [ep for ep in episodes if ep.fault]
    assert len(faulted) == 2 and all(ep.stop_reason == reason and ep.metrics[f"faults/{reason}"] == 1
                                     for ep in faulted), [(ep.stop_reason, ep.error) for ep in episodes]
    assert all(ep.stop_reason in ("solved", "max_turns") for ep in episodes if not ep.fault)


def test_a_server_that_is_down_ends_only_its_episodes(play):
    assert_only_faulted(play(mixed(f"http://127.0.0.1:{free_port()}")), "openenv_down")


def test_a_slow_server_times_out_its_episodes(play):
    with threaded(openenv_app(SlowEnv)) as url:
        episodes = play(mixed(url, message_timeout_s=0.3))
    assert_only_faulted(episodes, "openenv_timeout")
    assert all(len(ep.trajectory.turns) == 0 for ep in episodes if ep.fault)  # ended at its first step
    # a trajectory cut by the server's fault says nothing about the policy: not trained on
    groups, counts = episode_groups(episodes, 1)
    assert counts["env/dropped"] == 2 and len(groups) == 2


@pytest.mark.parametrize("reply", ["not json {", json.dumps({"type": "observation", "data": {"observation": {}}})])
def test_a_malformed_payload_ends_its_episodes(reply, play):
    with threaded(garbage_app(reply)) as url:
        assert_only_faulted(play(mixed(url)), "openenv_malformed")


def test_a_server_error_is_its_own_stop_reason(play):
    with threaded(openenv_app(FlakyEnv)) as url:  # seeds 0, 4, ... raise on the server
        episodes = play(lambda: OpenEnvEnv(url))
    assert [ep.stop_reason == "openenv_server_error" for ep in episodes] == [True, False, False, False]
    assert "flaky server: no game for seed 0" in episodes[0].error


def test_a_run_goes_on_under_the_failure_rate_and_stops_over_it(tmp_path, capsys):
    with threaded(openenv_app(FlakyEnv)) as url:
        # 2 of each step's 8 episodes fault (consecutive seeds): 0.25, under the limit
        ok = train(run_config(tmp_path, url, "env.max_failure_rate=0.3")).folder.read_metrics()
    assert [r["step"] for r in ok] == [1, 2]
    assert all(r["env/fault_rate"] == 0.25 and r["env/faults/openenv_server_error"] == 2 for r in ok)
    assert all(r["env/dropped"] == 2 and r["env/stop/openenv_server_error"] == 0.25 for r in ok)
    dead = f"http://127.0.0.1:{free_port()}"
    code = main(["train", str(REPO / "recipes/env_guess_number.toml"), "--set", f"run.output_dir={tmp_path}",
                 "--set", "run.name=dead", *[a for s in SMALL for a in ("--set", s)], "--set", f'env.url="{dead}"'])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert "8 of 8 episodes of this step ended by environment faults (openenv_down 8)" in err[0]
    assert "env.max_failure_rate = 0.5" in err[0]
