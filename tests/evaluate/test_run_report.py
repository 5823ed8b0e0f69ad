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


# An environment run's row as rlvr.envs.scored.episode_record writes it (two turns, a tool call).
EPISODE_ROW = {"step": 60, "prompt": "Guess a number in 1..10.", "gold": "7", "completion": "<guess>7</guess>",
               "reward": 0.5, "flags": ["max_turns"], "cot_flags": [],
               "episode": {"seed": 3, "tool_calls": 1, "step_rewards": [0.0, 0.5], "stop_reason": "max_turns",
                           "success": False, "error": None, "prompt_tokens": 9, "tokens": 40,
                           "turns": [{"action": "<tool>python 3+4</tool>", "observation": "tool says 7 </script>",
                                      "reward": 0.0, "tool_calls": 1, "policy_tokens": 8, "observation_tokens": 6,
                                      "finish": "stop"},
                                     {"action": "<guess>7</guess>", "observation": "", "reward": 0.5,
                                      "tool_calls": 0, "policy_tokens": 5, "observation_tokens": 0,
                                      "finish": "length"}]}}


def make_run(folder: Path) -> Path:
    folder.mkdir()
    metrics, samples = [], []
    for step in range(1, 61):
        row = {"step": step, "reward/mean": step / 60, "reward/accuracy": step / 60, "throughput/tokens_per_s": 500.0,
               "time/step_s": 0.2, "monitor/warnings": float(step in (20, 40)),
               "monitor/cot_flagged": 0.25 if step in (20, 40) else 0.0, "async/staleness": 0.0,
               "policy/ratio_mean": 1.0 + 1e-7 * (-1) ** step, "policy/approx_kl": 1e-3 * step}
        if step % 3 == 0:
            row["eval/accuracy"] = float(sigmoid_reward([100.0 * step], 0.1, 0.7, 2.0, 2000.0)[0])
        metrics.append(row)
        samples.append({"step": step, "prompt": f"{step}+1=", "gold": str(step + 1), "completion": str(step + 1),
                        "reward": float(step % 2), "flags": [], "cot_flags": ["hardcode"] if step in (20, 40) else []})
    samples.append({"step": 60, "prompt": "env", "reward": 1.0, "flags": ["timeout"], "cot_flags": [],
                    "turns": [{"role": "user", "content": "look"}, {"role": "assistant", "content": "go </script>"}]})
    samples.append(EPISODE_ROW)
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
    # 2 headline charts; reward/mean (= reward/accuracy, drawn once), eval/accuracy, approx_kl, ratio_mean,
    # 2 monitor; throughput, time and the sync run's async/staleness are constant: one line, no chart
    assert page.count("<svg class='metric'") == 8
    assert "data-key='reward/accuracy' " in page and "reward/accuracy = reward/mean" in page
    assert "constant over the run: throughput/tokens_per_s = 500, time/step_s = 0.2" in page
    assert "id='section-async'" not in page and "async/staleness" not in page
    sections = re.findall(r"id='section-([a-z-]+)'", page)
    assert sections == ["reward", "eval", "kl", "policy-and-clipping", "monitors", "throughput-and-compute"]
    assert page.index("id='headline'") < page.index("<h2>Metrics</h2>")
    assert "2 of 60 steps warned" in page and "monitor/cot_flagged = 0.25" in page
    assert "R(C) = R0" in page
    assert not re.search(r"(src|href)\s*=\s*['\"]?(https?:)?//", page)  # nothing fetched


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (apt-get install -y chromium)")
@pytest.mark.parametrize("hash_,shown", [("", 62), ("#flagged=1", 4), ("#min=1", 31), ("#step=20&flagged=1", 1),
                                         ("#stop=max_turns", 1), ("#step=60&max=0.6", 2)])
def test_in_a_headless_browser_charts_render_and_filters_work(tmp_path, hash_, shown):
    folder = make_run(tmp_path / "run")
    report(folder)
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}"]
    url = (folder / "report.html").as_uri() + hash_
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", url], capture_output=True, text=True, timeout=120).stdout
    assert f"{shown} of 62 samples" in dom  # the script ran and filtered
    assert len(re.findall(r'<tr class="sample"><td>\d', dom)) == shown and dom.count("<polyline") == 10
    if hash_ in ("", "#stop=max_turns"):  # the episode, turn by turn, escaped
        assert '<p class="stop">stop: max_turns, 2 turns, 1 tool calls, no success</p>' in dom
        assert ('<b>turn 1</b> (reward 0, 1 tool call, finish stop)<pre class="action">&lt;tool&gt;python 3+4'
                '&lt;/tool&gt;</pre><pre class="observation">tool says 7 &lt;/script&gt;</pre>') in dom
        assert '<b>turn 2</b> (reward 0.5, finish length)<pre class="action">&lt;guess&gt;7&lt;/guess&gt;</pre></div>' in dom
    if hash_ == "":
        assert "1 user:" in dom and "go &lt;/script&gt;" in dom  # chat turns, escaped
        subprocess.run([CHROMIUM, *flags, "--window-size=1200,1600", f"--screenshot={tmp_path / 'shot.png'}", url],
                       capture_output=True, timeout=120)
        assert (tmp_path / "shot.png").stat().st_size > 10_000


def test_a_torn_last_metrics_line_is_left_out_and_an_inner_one_is_an_error(tmp_path):
    from rlvr.errors import RlvrError
    from rlvr.evaluate.run_report import read_jsonl

    path = tmp_path / "metrics.jsonl"
    path.write_text('{"step": 1}\n{"step": 2}\n{"ste', encoding="utf-8")  # killed mid-append
    assert read_jsonl(path) == [{"step": 1}, {"step": 2}]
    path.write_text('{"step": 1}\n{"ste\n{"step": 3}\n', encoding="utf-8")
    with pytest.raises(RlvrError, match="metrics.jsonl:2: not valid JSON"):
        read_jsonl(path)


MEASURE = """<script>
const vh = window.innerHeight, box = id => document.querySelector(id).getBoundingClientRect();
const charts = [...document.querySelectorAll('#headline svg')].map(s => Math.round(s.getBoundingClientRect().bottom));
document.body.insertAdjacentHTML('beforeend', '<p id="measured" data-vh="' + vh + '" data-bottom="'
  + Math.round(box('#headline').bottom) + '" data-charts="' + charts.join(' ') + '" data-metrics="'
  + Math.round(box('#section-reward').top) + '"></p>');
</script>"""


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (apt-get install -y chromium)")
def test_the_headline_is_in_the_first_viewport(tmp_path):
    """Measured twice in a 1200 x 900 window: element positions read in the page (a script added
    to a copy of it), and the screenshot: the forecast interval's red is drawn above the fold."""
    from PIL import Image

    folder = make_run(tmp_path / "run")
    page = report(folder)
    measured = tmp_path / "measured.html"
    measured.write_text(page.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
             f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1200,900"]
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", measured.as_uri()], capture_output=True, text=True,
                         timeout=120).stdout
    found = re.search(r'id="measured" data-vh="(\d+)" data-bottom="(\d+)" data-charts="([\d ]+)" data-metrics="(\d+)"',
                      dom)
    assert found, dom[-500:]
    vh, bottom, charts, metrics_top = int(found[1]), int(found[2]), [int(c) for c in found[3].split()], int(found[4])
    assert len(charts) == 2 and max(charts) <= vh and bottom <= vh, (vh, bottom, charts)
    assert metrics_top > bottom  # the metric sections come after the headline
    subprocess.run([CHROMIUM, *flags, f"--screenshot={tmp_path / 'shot.png'}", (folder / "report.html").as_uri()],
                   capture_output=True, timeout=120)
    pixels = np.asarray(Image.open(tmp_path / "shot.png").convert("RGB")).astype(int)
    red = (np.abs(pixels - [0xd6, 0x27, 0x28]).sum(axis=-1) < 40)  # the forecast interval's colour
    assert pixels.shape[0] <= 900 and red.sum() > 20
    if os.environ.get("RLVR_UPDATE_SCREENSHOT") == "1":  # re-recorded on purpose only
        shutil.copy(tmp_path / "shot.png", SHOT)
