"""A spec file: refused at load for what cannot be a spec, naming the line; `check` reports
conflicts, overlaps and categories with no rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlvr.cli.main import main
from rlvr.errors import ConfigError
from rlvr.spec.document import check, load_spec

REPO = Path(__file__).resolve().parents[2]
HEAD = 'version = "1"\ncategories = ["a", "b"]\n'


def rule(id_, category="a", action="refuse", text="Do it.", extra=""):
    return f'\n[[rule]]\nid = "{id_}"\ncategory = "{category}"\naction = "{action}"\ntext = "{text}"\n{extra}'


def spec_file(tmp_path, text):
    path = tmp_path / "spec.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("body, message", [
    (rule("R1") + rule("R1", "b"), r"spec.toml:10: duplicate rule id 'R1' \(first at line 4\)"),
    (rule("R1", "c"), r"spec.toml:4: rule R1 cites category 'c', which is not in 'categories'"),
    (rule("R1", text=""), r"spec.toml:4: rule field 'text' is missing or empty"),
    (rule("R1", action="comply_with_resource"), r"spec.toml:4: rule R1: action 'comply_with_resource' needs a 'resource'"),
    (rule("R1", action="ignore"), r"action 'ignore' is not one of"),
])
def test_what_cannot_be_a_spec_is_refused_naming_the_line(tmp_path, body, message):
    with pytest.raises(ConfigError, match=message):
        load_spec(spec_file(tmp_path, HEAD + body))


def test_check_reports_conflicts_overlaps_and_uncovered_categories(tmp_path):
    spec = load_spec(spec_file(tmp_path, HEAD.replace('"b"]', '"b", "c"]') + rule("R1") + rule("R2", action="comply")
                               + rule("R3") + rule("R4", "b")))
    problems = check(spec)
    assert len(problems) == 3
    assert "rule R2 (comply) conflicts with rule R1 (refuse, line 4) on category 'a'" in problems[0]
    assert "rule R3 (refuse) overlaps rule R1" in problems[1]
    assert "category 'c' has no rule" in problems[2]


def test_the_shipped_specs_pass_the_check_and_the_cli_says_so(capsys, tmp_path):
    for name in ("assistant_v1.toml", "assistant_v2.toml"):
        assert main(["spec", "check", str(REPO / "specs" / name)]) == 0
    assert "no conflict, overlap or uncovered category" in capsys.readouterr().out
    bad = spec_file(tmp_path, HEAD + rule("R1") + rule("R2", action="comply"))
    assert main(["spec", "check", str(bad)]) == 1
