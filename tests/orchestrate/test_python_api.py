"""The Python API (`import rlvr`, docs/python-api.md): the page's example runs; a Python reward
object scores the run; overrides as a dict or lines; the names do not collide with packages."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import rlvr
from rlvr.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src" / "rlvr"
SMALL = {"train.steps": 2, "sampling.prompts_per_step": 2, "sampling.group_size": 4, "eval.size": 0,
         "log.progress": "none"}


class Scores:
    """A reward object that remembers every score it gave, in order."""

    def __init__(self):
        self.scores: list[float] = []

    def __call__(self, response, gold):
        self.scores.append(float(len(response) % 2))  # varies on a random-ish policy
        return self.scores[-1]


def test_a_reward_object_scores_the_run_and_the_callbacks_see_each_step(tmp_path):
    reward, steps = Scores(), []
    result = rlvr.run("grpo", overrides={**SMALL, "run.output_dir": str(tmp_path)}, reward=reward,
                      on_step=lambda step, metrics: steps.append((step, metrics["reward/mean"])))
    assert isinstance(result, rlvr.RunResult) and result.steps == 2
    assert len(reward.scores) == 2 * 2 * 4  # steps x prompts x completions, nothing else scored
    # the metrics line's reward is the object's: the mean of the 8 scores it gave that step
    assert steps == [(1, pytest.approx(sum(reward.scores[:8]) / 8)), (2, pytest.approx(sum(reward.scores[8:]) / 8))]
    assert "reward.function" not in (result.folder.path / "config.toml").read_text()
    assert any("rlvr.resume(run_dir, reward=...)" in n for n in result.notes)


def test_a_reward_callable_meets_the_rules_of_reward_function():
    with pytest.raises(ConfigError, match="reward.template"):  # a template needs a verifier that reads it
        rlvr.run("grpo", overrides={**SMALL, "reward.template": "boxed"}, reward=Scores())


def test_a_module_level_reward_function_is_named_in_the_run_config(tmp_path, monkeypatch):
    (tmp_path / "api_reward_module.py").write_text("def short(response, gold):\n    return float(len(response) < 4)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import api_reward_module

    result = rlvr.run("grpo", overrides={**SMALL, "train.steps": 1, "run.output_dir": str(tmp_path)},
                      reward=api_reward_module.short)
    assert rlvr.load_config(result.folder.path / "config.toml").reward.function == "api_reward_module:short"
    assert result.notes == []
    assert rlvr.orchestrate.api.importable_name(lambda r, g: 0.0) is None
    assert rlvr.orchestrate.api.importable_name(Scores()) is None


def test_make_config_takes_a_name_a_file_a_config_and_dict_or_line_overrides(tmp_path):
    by_name = rlvr.make_config("grpo", {"train.lr": 3e-4, "run.name": "2024"})
    assert by_name.train.lr == 3e-4 and by_name.run.name == "2024"
    again = rlvr.make_config(by_name, ["train.steps=7"])
    assert again.train.steps == 7 and again.train.lr == 3e-4 and again.algo == by_name.algo
    assert rlvr.make_config(REPO / "recipes" / "grpo.toml") == rlvr.load_config(REPO / "recipes" / "grpo.toml")
    with pytest.raises(ConfigError, match="train.lrr"):
        rlvr.make_config(by_name, {"train.lrr": 1.0})
    with pytest.raises(ConfigError, match="no such recipe"):
        rlvr.make_config("grpoo")
    with pytest.raises(ConfigError, match="a list of 'section.key=value' strings or a dict"):
        rlvr.make_config("grpo", "train.lr=1")


def test_verifier_and_plan():
    assert rlvr.verifier("math")(response="so the answer is 42", gold="42").score == 1.0
    assert rlvr.verifier("exact", exact_case_sensitive=True)(response="Yes", gold="yes").score == 0.0
    assert "surrogate ppo_clip" in rlvr.plan(rlvr.make_config("grpo")).describe()[0]


def test_no_api_name_is_shadowed_by_a_subpackage():
    """`import rlvr.X` sets the attribute X on rlvr: an API name equal to a module's would be
    replaced by that module as soon as it is imported."""
    modules = {p.stem for p in SRC.glob("*.py")} | {p.name for p in SRC.iterdir() if p.is_dir()}
    assert set(rlvr.__all__) & modules == set()


def test_import_rlvr_loads_no_torch():
    """The CLI's config checks import rlvr.config before torch; `import rlvr` must not load it."""
    lazy = "import sys, rlvr, rlvr.config; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", lazy], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_docs_example_runs(tmp_path, monkeypatch, capsys):
    page = (REPO / "docs" / "python-api.md").read_text()
    example = re.findall(r"```python\n(.*?)```", page, re.S)[0]  # [1]: tests/orchestrate/test_eval_api.py
    example = example.replace('"log.progress": "none"', f'"log.progress": "none", "run.output_dir": {str(tmp_path)!r}')
    assert str(tmp_path) in example
    namespace: dict = {}
    exec(compile(example, "docs/python-api.md", "exec"), namespace)
    out = capsys.readouterr().out
    assert "step 2: held-out" in out and namespace["result"].steps == 2
    assert namespace["reward"].calls == 2 * 4 * 4 + 16  # training, then the step-2 evaluation
    assert len(namespace["seen"]) == 2
