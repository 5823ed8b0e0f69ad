"""The faces of `rlvr.rewards` and its packages (issue 28): every exported name imports, each
package's face is the one docs/rewards.md lists, and a config naming a module of the old flat
layout (`rlvr.rewards.math_verifier`) still resolves, through `function_spec.MOVED_MODULES`."""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import pytest

from rlvr.config.load import load_config
from rlvr.function_spec import MOVED_MODULES, import_function

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ["rlvr.rewards", "rlvr.rewards.math", "rlvr.rewards.code", "rlvr.rewards.sandbox", "rlvr.rewards.judge"]


def _documented_faces() -> dict[str, set[str]]:
    """docs/rewards.md's layout table: `rewards/NAME/` -> the names in its face column."""
    faces = {}
    for line in (ROOT / "docs" / "rewards.md").read_text().splitlines():
        row = re.match(r"\| `rewards/(\w+)/` \|.*\| (.*) \|$", line)
        if row:
            faces[f"rlvr.rewards.{row[1]}"] = set(re.findall(r"`(\w+)`", row[2]))
    return faces


@pytest.mark.parametrize("package", PACKAGES)
def test_every_exported_name_imports(package):
    module = importlib.import_module(package)
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert module.__all__ and missing == []


def test_the_packages_faces_are_the_documented_ones():
    documented = _documented_faces()
    assert set(documented) == set(PACKAGES[1:])
    for package, names in documented.items():
        assert set(importlib.import_module(package).__all__) == names, package


def test_rlvr_rewards_keeps_the_verifiers():
    import rlvr.rewards as rewards
    from rlvr.rewards.code import CodeVerifier
    from rlvr.rewards.math import MathVerifier
    assert rewards.MathVerifier is MathVerifier and rewards.CodeVerifier is CodeVerifier
    assert rewards.VERIFIERS["math"] is MathVerifier and rewards.VERIFIERS["code"] is CodeVerifier


@pytest.mark.parametrize("old", sorted(MOVED_MODULES))
def test_each_old_module_maps_to_a_module_and_is_gone(old):
    assert importlib.util.find_spec(MOVED_MODULES[old]) is not None
    assert importlib.util.find_spec(old) is None  # no shim left behind


def test_an_old_run_folder_config_naming_an_old_module_loads(tmp_path):
    golden = (ROOT / "tests" / "golden" / "resume_run" / "config.toml").read_text()
    old = golden.replace('[reward]\nverifier = "math"', '[reward]\nfunction = "rlvr.rewards.math_verifier:hedge_verdict"')
    assert old != golden
    (tmp_path / "config.toml").write_text(old)
    config = load_config(tmp_path / "config.toml")
    from rlvr.rewards.math.verifier import hedge_verdict
    assert import_function(config.reward.function, "reward.function") is hedge_verdict
