"""env.kind = "emulated": guess-the-number played by a fake OpenAI-compatible emulator (a real
HTTP server in this process, tests/envs/fake_emulator.py). Its observations reach the policy,
the run is flagged in its metrics and report, `rlvr env check --against` scores its fidelity,
and a garbled or unreachable emulator ends only its episodes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from rlvr.cli.main import main
from rlvr.config import load_config
from rlvr.engines.base import SamplingParams
from rlvr.envs import EpisodeLimits, EpisodeRunner, PlainRenderer
from rlvr.evaluate.run_report import write_run_report
from rlvr.orchestrate import train
from rlvr.orchestrate.remote_env_choice import emulated_spec
from rlvr.types import Sample

sys.path.insert(0, str(Path(__file__).parent))
from fake_emulator import emulator_app  # noqa: E402
from openenv_servers import free_port, threaded  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SPEC = "Guess the number: the secret is the hidden answer; answer 'N is too low: guess higher.' or lower."
EMULATED = ['env.kind="emulated"', f'env.spec="{SPEC}"']


def test_a_run_on_an_emulated_env_gets_its_observations_and_is_flagged(tmp_path):
    app = emulator_app()
    with threaded(app) as url:
        folder = train(load_config(REPO / "recipes/env_guess_number.toml", [
            f"run.output_dir={tmp_path}", "run.name=emu", "sampling.prompts_per_step=2", "sampling.group_size=4",
            "log.progress=none", "checkpoint.every_minutes=0", "train.steps=2", *EMULATED,
            f'env.url="{url}/v1"'])).folder
    rows = folder.read_metrics()
    assert [r["step"] for r in rows] == [1, 2] and all(r["env/emulated"] == 1.0 for r in rows)
    assert all(r["env/fault_rate"] == 0.0 for r in rows)
    served = app.state.served
    assert len(served) >= 16 and all(SPEC in p for p in served)  # a reset a episode at least, all with the spec
    samples = [json.loads(line) for line in folder.samples.read_text().splitlines()]
    turns = [t for s in samples for t in s["episode"]["turns"][:-1]]
    assert turns and all(t["observation"].endswith(("guess higher.", "guess lower.", "whole number.")) for t in turns)
    page = write_run_report(folder.path).read_text()
    assert "id='emulated'" in page and "in 2 of 2 steps" in page


def check(url: str, tmp_path) -> dict:
    out = tmp_path / "r.json"
    assert main(["env", "check", "env_guess_number", "--episodes", "12", "--against", "env_guess_number",
                 *[a for s in [*EMULATED, f'env.url="{url}/v1"'] for a in ("--against-set", s)],
                 "--json", str(out)]) == 0
    return json.loads(out.read_text())["parity"]


def test_env_check_scores_the_fidelity_of_an_emulator(tmp_path, capsys):
    with threaded(emulator_app()) as url:
        faithful = check(url, tmp_path)
    assert faithful["fidelity"] == 1.0 and faithful["steps"] > 12
    with threaded(emulator_app(lie_above=10)) as url:  # says "too low" for any guess above 10
        liar = check(url, tmp_path)
    assert 0.0 < liar["fidelity"] < 1.0 and liar["observation_match"] < 1.0
    assert "parity against env_guess_number: fidelity" in capsys.readouterr().out


@pytest.fixture
def play(scripted, char_tok):
    def run(url: str) -> list:
        e = load_config(REPO / "recipes/env_guess_number.toml", [*EMULATED, f'env.url="{url}/v1"',
                                                                   "env.timeout_s=2"]).env
        make = emulated_spec(e)["make_env"]
        with EpisodeRunner(scripted(lambda row: "1"), PlainRenderer(char_tok), SamplingParams(max_new_tokens=4),
                           EpisodeLimits(max_turns=3)) as runner:
            return runner.run(make, [Sample("Guess 1..20", str(i + 2)) for i in range(3)], [0, 1, 2])

    return run


def test_a_garbled_or_unreachable_emulator_ends_only_its_episodes(play):
    with threaded(emulator_app(garbage=True)) as url:
        garbled = play(url)
    assert [ep.stop_reason for ep in garbled] == ["emulator_malformed"] * 3
    assert all(ep.fault and ep.metrics["faults/emulator_malformed"] == 1 for ep in garbled)
    assert "I am an environment!" in garbled[0].error
    down = play(f"http://127.0.0.1:{free_port()}")
    assert [ep.stop_reason for ep in down] == ["emulator_error"] * 3 and "cannot connect" in down[0].error
    with threaded(emulator_app()) as url:
        fine = play(url)
    assert [ep.stop_reason for ep in fine] == ["max_turns"] * 3 and not any(ep.fault for ep in fine)


def test_bad_emulated_and_openenv_sections_are_refused_with_the_key():
    from rlvr.errors import ConfigError

    recipe = REPO / "recipes/env_guess_number.toml"
    with pytest.raises(ConfigError, match="exactly one of env.spec and env.spec_file"):
        load_config(recipe, [*EMULATED, 'env.spec_file="rules.txt"', 'env.url="http://x/v1"'])
    with pytest.raises(ConfigError, match="env.url"):
        load_config(recipe, EMULATED)
    with pytest.raises(ConfigError, match="max_failure_rate"):  # 1 would let a step of only faults through
        load_config(recipe, ['env.kind="openenv"', 'env.url="http://x"', "env.max_failure_rate=1"])
