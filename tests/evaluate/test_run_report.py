"""`rlvr report RUN_DIR` on a made-up run folder: the page, and (when Chromium is installed)
the page in a real headless browser: charts render, the filters work, a screenshot."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from rlvr.cli import report_command
from rlvr.scaling import sigmoid_reward

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SHOT = Path(__file__).resolve().parents[2] / "docs" / "run_report.png"


def make_run(folder: Path) -> Path:
    folder.mkdir()
    metrics, samples = [], []
    for step in range(1, 61):
        row = {"step": step, "reward/mean": step / 60, "throughput/tokens_per_s": 500.0, "time/step_s": 0.2,
               "monitor/warnings": float(step in (20, 40)), "monitor/cot_flagged": 0.25 if step in (20, 40) else 0.0}
        if step % 3 == 0:
            row["eval/accuracy"] = float(sigmoid_reward([100.0 * step], 0.1, 0.7, 2.0, 2000.0)[0])
        metrics.append(row)
        samples.append({"step": step, "prompt": f"{step}+1=", "gold": str(step + 1), "completion": str(step + 1),
                        "reward": float(step % 2), "flags": [], "cot_flags": ["hardcode"] if step in (20, 40) else []})
    samples.append({"step": 60, "prompt": "env", "reward": 1.0, "flags": ["timeout"], "cot_flags": [],
                    "turns": [{"role": "user", "content": "look"}, {"role": "assistant", "content": "go </script>"}]})
    (folder / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in metrics))
    (folder / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in samples))
    return folder


def report(folder: Path) -> str:
    ap = argparse.ArgumentParser()
    report_command.add_parser(ap.add_subparsers())
    assert report_command.run_report(ap.parse_args(["report", str(folder)])) == 0
    return (folder / "report.html").read_text()


def test_the_page_has_every_chart_the_fit_and_the_warnings_and_no_network(tmp_path):
    page = report(make_run(tmp_path / "run"))
    assert page.count("<svg class='metric'") == 6  # reward/mean, eval/accuracy, 2 throughput/time, 2 monitor
    assert "<h3>monitor</h3>" in page and "<h3>eval</h3>" in page
    assert "2 of 60 steps warned" in page and "monitor/cot_flagged = 0.25" in page
    assert "R(C) = R0" in page
    assert not re.search(r"(src|href)\s*=\s*['\"]?(https?:)?//", page)  # nothing fetched


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (apt-get install -y chromium)")
@pytest.mark.parametrize("hash_,shown", [("", 61), ("#flagged=1", 3), ("#min=1", 31), ("#step=20&flagged=1", 1)])
def test_in_a_headless_browser_charts_render_and_filters_work(tmp_path, hash_, shown):
    folder = make_run(tmp_path / "run")
    report(folder)
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}"]
    url = (folder / "report.html").as_uri() + hash_
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", url], capture_output=True, text=True, timeout=120).stdout
    assert f"{shown} of 61 samples" in dom  # the script ran and filtered
    assert len(re.findall(r'<tr class="sample"><td>\d', dom)) == shown and dom.count("<polyline") == 6
    if hash_ == "":
        assert "1 user:" in dom and "go &lt;/script&gt;" in dom  # a trajectory, turn by turn, escaped
        subprocess.run([CHROMIUM, *flags, "--window-size=1200,1600", f"--screenshot={tmp_path / 'shot.png'}", url],
                       capture_output=True, timeout=120)
        assert (tmp_path / "shot.png").stat().st_size > 10_000
        if os.environ.get("RLVR_UPDATE_SCREENSHOT") == "1":  # re-recorded on purpose only
            shutil.copy(tmp_path / "shot.png", SHOT)


def test_a_torn_last_metrics_line_is_left_out_and_an_inner_one_is_an_error(tmp_path):
    from rlvr.errors import RlvrError
    from rlvr.evaluate.run_report import read_jsonl

    path = tmp_path / "metrics.jsonl"
    path.write_text('{"step": 1}\n{"step": 2}\n{"ste', encoding="utf-8")  # killed mid-append
    assert read_jsonl(path) == [{"step": 1}, {"step": 2}]
    path.write_text('{"step": 1}\n{"ste\n{"step": 3}\n', encoding="utf-8")
    with pytest.raises(RlvrError, match="metrics.jsonl:2: not valid JSON"):
        read_jsonl(path)
