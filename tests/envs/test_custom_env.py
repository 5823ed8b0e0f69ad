"""env.kind = "custom" as a new user meets it: the tutorial's key-value environment
(docs/environments-tutorial.md), written into a temporary module from the page's own text, then
trained, evaluated and resumed through the CLI; the factory's errors; the contract checks."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rlvr.cli.main import main
from rlvr.config import load_config
from rlvr.errors import ConfigError
from rlvr.orchestrate.env_factory import checked_factory

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "environments-tutorial.md"


def page_block(lang: str, marker: str) -> str:
    """The page's ```lang block that contains `marker`."""
    blocks = re.findall(rf"```{lang}\n(.*?)```", PAGE.read_text(), flags=re.S)
    found = [b for b in blocks if marker in b]
    assert len(found) == 1, f"{PAGE.name} has {len(found)} {lang} blocks with {marker!r}"
    return found[0]


def test_the_page_shows_the_example_files_verbatim():
    assert page_block("python", "class KVEnv") == (REPO / "docs/examples/kv_env.py").read_text()
    assert page_block("toml", 'factory = "kv_env:KVEnv"') == (REPO / "docs/examples/kv_env.toml").read_text()


@pytest.fixture(scope="module")
def kv_run(tmp_path_factory):
    """The tutorial's steps: kv_env.py and kv.toml from the page, task rows, `rlvr train`."""
    tmp = tmp_path_factory.mktemp("kv")
    (tmp / "kv_env.py").write_text(page_block("python", "class KVEnv"))
    (tmp / "kv.toml").write_text(page_block("toml", 'factory = "kv_env:KVEnv"'))
    rows = [{"prompt": f"Store {v} under x with set, then answer with it.", "answer": str(v)} for v in range(10, 30)]
    for name, part in (("kv_train.jsonl", rows[:16]), ("kv_test.jsonl", rows[16:])):
        (tmp / name).write_text("".join(json.dumps(r) + "\n" for r in part))
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp)
        mp.syspath_prepend(str(tmp))  # as PYTHONPATH=. would
        assert main(["train", "kv.toml", "--set", "log.progress='none'", "--set", "checkpoint.every_minutes=0"]) == 0
        yield tmp, mp


def test_rlvr_train_plays_the_custom_environment(kv_run):
    tmp, _ = kv_run
    rows = [json.loads(line) for line in (tmp / "runs/kv/metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2]
    assert all(r["env/episodes"] == 8 for r in rows)  # 2 tasks x 4 episodes a step
    assert 'factory = "kv_env:KVEnv"' in (tmp / "runs/kv/config.toml").read_text()
    sample = json.loads((tmp / "runs/kv/samples.jsonl").read_text().splitlines()[0])
    assert sample["episode"]["turns"] and sample["prompt"].startswith("Store ")


def test_rlvr_eval_of_the_checkpoint_takes_the_recipes_turn_budget(kv_run):
    tmp, _ = kv_run
    assert main(["eval", "runs/kv/checkpoints/step_2", "--temperature", "0", "--out", "ev"]) == 0
    results = json.loads((tmp / "ev/results.json").read_text())
    assert results["settings"]["max_new_tokens"] == 64  # sampling.max_new_tokens: eval.max_new_tokens unset
    assert len(results["model"]["per_task"]) == 4  # the 4 held-out rows, one greedy episode each


def test_resume_finds_the_factory_from_config_toml(kv_run):
    tmp, _ = kv_run
    assert main(["train", "--resume", "runs/kv", "--set", "train.steps=3"]) == 0
    rows = (tmp / "runs/kv/metrics.jsonl").read_text().splitlines()
    assert [json.loads(r)["step"] for r in rows] == [1, 2, 3]


def test_a_factory_that_cannot_be_used_is_one_line_naming_the_key(kv_run):
    with pytest.raises(ConfigError, match=r"env.factory = 'kv_env:Nope': kv_env has no function 'Nope'"):
        checked_factory("kv_env:Nope", {})
    with pytest.raises(ConfigError, match=r"env.options = \{'size': 3\}: KVEnv\(\*\*env.options\) raised TypeError"):
        checked_factory("kv_env:KVEnv", {"size": 3})
    with pytest.raises(ConfigError, match=r"returned dict, not an rlvr.envs.Env"):
        checked_factory("json:loads", {"s": "{}"})
    with pytest.raises(ConfigError, match="env.factory"):
        load_config(None, ['env.kind="custom"'])  # the factory is required


def test_the_python_api_takes_the_class_itself(kv_run):
    import rlvr

    tmp, _ = kv_run
    from kv_env import KVEnv

    class Local(KVEnv):  # made in a function: no module names it
        pass

    base = {"run.output_dir": str(tmp / "api"), "train.steps": 1}
    named = rlvr.run("kv.toml", env=KVEnv, overrides={**base, "run.name": "named", "env.options": {"key": "y"}})
    assert 'factory = "kv_env:KVEnv"' in (named.folder.path / "config.toml").read_text()
    assert 'key = "y"' in (named.folder.path / "config.toml").read_text() and not named.notes
    local = rlvr.run("kv.toml", env=Local, overrides={**base, "run.name": "local"})
    assert any("python.object:" in note and "rlvr.resume" in note for note in local.notes)
    assert [r["step"] for r in local.folder.read_metrics()] == [1]
