"""The README is a landing page whose examples run: its Python block trains and exports, its
recipe block is a real recipe's settings, its links resolve inside the repository."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()


def test_the_python_example_trains_and_exports(tmp_path, capsys):
    example = re.findall(r"```python\n(.*?)```", README, re.S)[0]
    out_dir = tmp_path / "export"
    example = example.replace('"log.progress": "none"', f'"log.progress": "none", "run.output_dir": {str(tmp_path)!r}')
    example = example.replace('"out/"', repr(str(out_dir)))
    assert str(tmp_path) in example and str(out_dir) in example
    namespace: dict = {}
    exec(compile(example, "README.md", "exec"), namespace)
    assert namespace["result"].steps == 2
    assert (out_dir / "config.json").is_file()
    printed = capsys.readouterr().out.splitlines()
    assert printed[-1].startswith("2 ")  # result.steps, then the run folder


def test_the_recipe_example_is_the_named_recipe():
    block = re.findall(r"```toml\n(.*?)```", README, re.S)[0]
    recipe = re.search(r"recipes/(\w+)\.toml", block).group(1)
    shown = tomllib.loads(block)["algo"]
    real = tomllib.loads((REPO / "recipes" / f"{recipe}.toml").read_text())["algo"]
    assert shown and all(real[key] == value for key, value in shown.items())


def test_it_stays_a_landing_page():
    words = len(re.sub(r"```.*?```", "", README, flags=re.S).split())
    assert words < 900, f"README prose is {words} words"
    assert "../" not in README, "the README links outside the repository"
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b", README), "dated measurements go to benchmarks/README.md"


def test_its_links_resolve():
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README):
        if "://" not in target:
            assert (REPO / target).exists(), target


def test_every_docs_page_is_in_the_index_with_its_kind():
    index = (REPO / "docs" / "README.md").read_text()
    rows = dict(re.findall(r"^\| \[[^\]]+\]\(([^)]+)\) \| ([\w-]+) \|", index, re.M))
    pages = {p.relative_to(REPO / "docs").as_posix() for p in (REPO / "docs").rglob("*.md")} - {"README.md"}
    assert pages <= set(rows), f"pages missing from docs/README.md: {sorted(pages - set(rows))}"
    assert set(rows.values()) <= {"tutorial", "how-to", "reference"}
    assert all((REPO / "docs" / page).exists() for page in rows)
