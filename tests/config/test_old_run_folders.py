"""A run folder's config.toml written before [algo] and [reward] were keyed on kind (flat keys,
tests/config/old_run_folders/) loads to the plan it had then, through the one migration
(config/flat_keys.py); a flat key no chosen kind reads is refused naming that kind."""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path

import pytest

from rlvr.config import dump_config, load_config
from rlvr.config.flat_keys import _logged
from rlvr.errors import ConfigError
from rlvr.orchestrate.plan import plan_run
from rlvr.rewards.build import VERIFIER_OPTIONS

OLD = Path(__file__).parent / "old_run_folders"
PLANS = json.loads((OLD / "plans.json").read_text())


def planned(path: Path, overrides: list[str] = ()) -> dict:
    c = load_config(path, overrides)
    plan = plan_run(c)
    got = {"objective": {k: dict(v) if k == "surrogate_args" else v for k, v in plan.objective.items()},
           "batch": dataclasses.asdict(plan.batch), "verifier": repr(VERIFIER_OPTIONS[c.reward.verifier](c.reward))}
    return json.loads(json.dumps(got))


@pytest.mark.parametrize("name", sorted(PLANS))
def test_an_old_run_folder_plans_what_it_planned(name):
    assert planned(OLD / name) == PLANS[name]


def test_the_migrated_config_written_again_is_keyed_and_plans_the_same(tmp_path):
    new = tmp_path / "config.toml"
    new.write_text(dump_config(load_config(OLD / "grpo.toml")))
    text = new.read_text()
    assert "clip_c = 3.0" in text.split("[algo.dual_clip]")[1] and "mismatch_cap" not in text
    assert planned(new) == PLANS["grpo.toml"]


def test_the_moves_are_logged_once_per_source(caplog):
    _logged.clear()
    with caplog.at_level(logging.WARNING, logger="rlvr.config.flat_keys"):
        load_config(OLD / "vapo.toml")
        load_config(OLD / "vapo.toml")
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and "algo.lam_critic → algo.gae.lam_critic" in lines[0]


def test_an_old_set_is_migrated_too():
    c = load_config(OLD / "demo.toml", ["algo.surrogate=dual_clip", "algo.clip_c=2.5", "reward.math_timeout_s=4"])
    assert c.algo.dual_clip.clip_c == 2.5 and c.reward.math.timeout_s == 4


@pytest.mark.parametrize("overrides, message", [
    (["algo.gamma=0.9"], r"--set: algo.gamma is read only when algo.advantage = 'reinforce_pp' / 'gae'"),
    (["algo.cov_low=-2"], r"algo.cov_low is read only when algo.entropy_control = 'clip_cov'"),
    (["reward.code_workers=8"], r"reward.code_workers is read only when reward.verifier = 'code'"),
])
def test_a_flat_key_no_chosen_kind_reads_is_refused(overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_config(OLD / "demo.toml", overrides)


def test_an_old_set_replaces_the_recipes_keyed_key_and_a_file_with_both_is_refused(tmp_path):
    assert load_config(OLD.parents[2] / "recipes" / "ppo.toml", ["algo.gamma=0.9"]).algo.gae.gamma == 0.9
    both = tmp_path / "both.toml"
    both.write_text('[algo]\nsurrogate = "dual_clip"\nclip_c = 3.0\n[algo.dual_clip]\nclip_c = 4.0\n')
    with pytest.raises(ConfigError, match=r"both.toml:3: .*keep algo.dual_clip.clip_c"):
        load_config(both)


def test_a_flat_key_of_a_kind_not_chosen_in_an_old_run_folder_is_ignored_with_a_line(tmp_path, caplog):
    # old rlvr accepted `gamma = 0.99` under group advantages and read nothing from it: its run
    # folders must still resume (before: refused, naming a table the run never had)
    old = tmp_path / "config.toml"
    old.write_text((OLD / "demo.toml").read_text().replace("gamma = 1.0\n", "gamma = 0.99\n", 1))
    with caplog.at_level("WARNING"):
        config = load_config(old)
    assert config.algo.advantage != "gae" and config.algo.options("advantage") is None
    assert planned(old) == planned(OLD / "demo.toml")
    assert f"{old}: algo.gamma = 0.99 ignored, as rlvr always did: only algo.advantage = 'reinforce_pp' / 'gae' reads it" \
        in caplog.messages
