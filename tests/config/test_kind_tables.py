"""[algo] and [reward] keyed on kind (config/kind_tables.py): a chosen kind's table is there
with its defaults, a table of a kind not chosen is refused naming its keys and what reads them,
and docs/config.md lists every table's keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlvr.config import dump_config, load_config
from rlvr.config.algo_section import ALL_TABLES
from rlvr.config.reward_section import REWARD_TABLES
from rlvr.errors import ConfigError
from rlvr.rewards.build import VERIFIER_OPTIONS, reward_section

DOCS = Path(__file__).resolve().parents[2] / "docs" / "config.md"


def test_a_chosen_kind_gets_its_table_and_only_it_is_written():
    c = load_config(None, ["algo.advantage=gae", "algo.baseline=none", "algo.scale=none", "algo.gae.lam=0.8"])
    assert c.algo.options("advantage").lam == 0.8 and c.algo.options("surrogate") is None
    text = dump_config(c)
    assert "[algo.gae]" in text and "[algo.dual_clip]" not in text and "[reward.code]" not in text


@pytest.mark.parametrize("overrides, message", [
    (["reward.code.workers=4"], "reward.code.workers is read only when reward.verifier = 'code'"),
    (["reward.verifier=exact", "reward.math.timeout_s=3"], "reward.math.timeout_s is read only when"),
    (["algo.token_tis.cap=3"], r"algo.token_tis.cap is read only when algo.mismatch = 'token_tis' \(not 'none'\)"),
    (["algo.mismatch=token_tis", "algo.token_tis.low=0.3"], "unknown key 'algo.token_tis.low'"),
])
def test_a_table_of_a_kind_not_chosen_is_refused_in_one_line(overrides, message):
    with pytest.raises(ConfigError, match=message) as info:
        load_config(None, overrides)
    assert len(str(info.value).splitlines()) == 1


def test_a_rubric_criterion_chooses_its_verifiers_table():
    c = load_config(None, ["reward.verifier=rubric", "reward.rubric=[{name = 'c', verifier = 'code'}]",
                           "reward.code.workers=4"])
    assert VERIFIER_OPTIONS["code"](c.reward)["workers"] == 4


def test_verify_options_take_the_keyed_and_the_old_spelling():
    assert reward_section("math", {"math.timeout_s": 3}).math.timeout_s == 3
    assert reward_section("math", {"math_timeout_s": 4}).math.timeout_s == 4
    with pytest.raises(ConfigError, match="code_workers is read only when reward.verifier = 'code'"):
        reward_section("math", {"code_workers": 4})


def test_the_config_page_lists_every_tables_keys():
    lines = DOCS.read_text().splitlines()
    missing = [f"{name}.{kind}.{key}" for name, tables in (("algo", ALL_TABLES), ("reward", REWARD_TABLES))
               for kind, cls in tables.items() for key in cls.model_fields
               if not any(line.startswith(f"| `[{name}.{kind}]` |") and f"| `{key}` |" in line for line in lines)]
    assert not missing, f"docs/config.md lacks {missing}"


@pytest.mark.parametrize("recipe, switch, gone", [
    ("ppo", "algo.advantage=reinforce_pp", "gae"),  # recipes/ppo.toml has [algo.gae]
    ("vapo", "algo.advantage=group", "gae"),
])
def test_a_set_that_switches_a_recipes_kind_drops_that_kinds_table(recipe, switch, gone, caplog):
    # before: refused, "algo.gae.gamma / algo.gae.lam is read only when algo.advantage = 'gae'",
    # with no --set that could drop the recipe's table
    path = Path(__file__).resolve().parents[2] / "recipes" / f"{recipe}.toml"
    with caplog.at_level("WARNING"):
        config = load_config(path, [switch])
    assert config.algo.advantage == switch.split("=")[1]
    assert any(m.startswith(f"algo.{gone} dropped: --set {switch}") for m in caplog.messages)
    with pytest.raises(ConfigError, match=rf"algo\.{gone}\..*lam.* is read only when"):  # its own key, set: refused
        load_config(path, [switch, f"algo.{gone}.lam=0.9"])
