"""benchmarks/doc_timings.py: each figure still finds its example on its page, a page names only
figures that exist, a command line runs as the page writes it (outside the checkout), a failing
step is an error that names it, and one example runs end to end."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

import doc_timings  # noqa: E402


@pytest.mark.parametrize("figure", doc_timings.FIGURES, ids=lambda f: f.name)
def test_every_figure_finds_its_example_on_its_page(figure, tmp_path):
    doc_timings.link_checkout(tmp_path)
    steps = figure.prepare(tmp_path)  # raises LookupError when a block or command left the page
    assert any(step.timed for step in steps)
    for command in figure.commands:
        assert command in doc_timings.command_on_page(figure.page, command)
    for step in steps:
        outside = [a for a in step.argv if "/tmp/" in a and str(tmp_path) not in a]
        assert not outside, step.label  # the page's /tmp/ paths moved into the example's folder


def test_the_pages_cite_only_figures_that_exist():
    cited = {}
    for page in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]:
        for name in re.findall(r"doc_timings\.py\s+--only\s+([a-z0-9,-]+)", page.read_text(encoding="utf-8")):
            for one in name.split(","):
                cited.setdefault(one, page.name)
    unknown = {n: p for n, p in cited.items() if n not in doc_timings.BY_NAME}
    assert not unknown
    assert cited, "no page cites doc_timings.py"
    for name, page in cited.items():  # a figure is quoted on the page it times
        assert doc_timings.BY_NAME[name].page.endswith(page), (name, page)


def test_a_command_line_runs_as_written_but_outside_the_checkout(tmp_path):
    step = doc_timings.shell_step("PYTHONPATH=. OMP_NUM_THREADS=1 rlvr eval --out /tmp/eval-x", tmp_path)
    assert step.argv == (*doc_timings.RLVR, "eval", "--out", f"{tmp_path}/eval-x")
    assert dict(step.env) == {"PYTHONPATH": str(tmp_path.resolve()), "OMP_NUM_THREADS": "1"}
    assert doc_timings.shell_step("python x.py", tmp_path).argv == (sys.executable, "x.py")


def test_a_page_command_loses_its_prompt_and_continuations():
    line = doc_timings.command_on_page("docs/evaluation.md", "rlvr eval --samples /tmp/cot_samples.jsonl")
    assert line.startswith("rlvr eval --samples /tmp/cot_samples.jsonl --k 1,2")
    assert line.endswith("--cot-threshold 0.6") and "\\" not in line and "  " not in line
    with pytest.raises(LookupError, match="no command line starting 'rlvr nothing'"):
        doc_timings.command_on_page("docs/evaluation.md", "rlvr nothing")


def test_a_failing_step_is_an_error_that_names_it(tmp_path):
    step = doc_timings.Step((sys.executable, "-c", "import sys; print('seen'); sys.exit(3)"), "the step")
    with pytest.raises(RuntimeError, match=r"'the step' exited 3:\nseen"):
        doc_timings.run_step(step, tmp_path)


def test_one_example_runs_end_to_end():
    rows = doc_timings.measure(doc_timings.BY_NAME["eval-samples"])
    assert len(rows) == 1 and rows[0]["rc"] == 0 and rows[0]["wall_s"] > 0 and rows[0]["cpu_s"] > 0
    assert any("disagreements: 2 of 2 prompts" in line for line in rows[0]["stdout_tail"])
    assert not (REPO / "eval-samples").exists()
