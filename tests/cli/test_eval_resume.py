"""`rlvr eval` on a model resumes a stopped evaluation: done prompts are skipped and the results
equal those of an uninterrupted run; its sampling defaults come from the recipe."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlvr.cli.main import main

REPO = Path(__file__).resolve().parents[2]
TINY = str(REPO / "models/tiny-arith")
ARGS = ["eval", TINY, "--n", "2", "--k", "1,2", "--limit", "12", "--chunk-prompts", "4"]


def generated_prompts(monkeypatch, stop_after: int | None = None) -> list[str]:
    """Record the prompts the engine is asked for; raise KeyboardInterrupt on call stop_after + 1."""
    from rlvr.engines.hf import HFEngine

    monkeypatch.undo()  # wrap the real engine, not an earlier spy
    seen, calls, real = [], [], HFEngine.generate

    def spy(self, prompts, n, params):
        if stop_after is not None and len(calls) == stop_after:
            raise KeyboardInterrupt
        calls.append(1)
        seen.extend(prompts)
        return real(self, prompts, n, params)

    monkeypatch.setattr(HFEngine, "generate", spy)
    return seen


def results(out: Path) -> dict:
    record = json.loads((out / "results.json").read_text())
    return {"model": record["model"], "settings": {k: v for k, v in record["settings"].items()}}


def test_a_stopped_eval_resumes_to_the_same_results(tmp_path, monkeypatch, capsys):
    assert main(ARGS + ["--out", str(tmp_path / "whole")]) == 0
    whole = results(tmp_path / "whole")
    out = tmp_path / "stopped"
    generated_prompts(monkeypatch, stop_after=2)  # killed while sampling the third chunk
    assert main(ARGS + ["--out", str(out)]) == 130
    progress = out / "progress_model.jsonl"
    assert len(progress.read_text().splitlines()) == 3  # settings + 2 chunks
    with progress.open("a") as f:
        f.write('{"chunk": 2, "groups": [{"prom')  # a line torn by kill -9
    seen = generated_prompts(monkeypatch)
    assert main(ARGS + ["--out", str(out)]) == 0
    assert "resuming model: 8 of 12 prompts done" in capsys.readouterr().out
    assert len(seen) == 4  # only the last chunk was sampled again
    assert results(out) == whole
    seen.clear()
    assert main(ARGS + ["--out", str(out)]) == 0 and seen == []  # all done: nothing sampled


def test_resume_refuses_other_settings_and_fresh_starts_over(tmp_path, capsys):
    out = tmp_path / "o"
    assert main(ARGS + ["--out", str(out)]) == 0
    assert main(ARGS[:-1] + ["3", "--out", str(out)]) == 2
    assert "a partial evaluation with other settings (chunk_prompts differ)" in capsys.readouterr().err
    assert main(ARGS[:-1] + ["3", "--out", str(out), "--fresh"]) == 0


def test_sampling_defaults_come_from_the_recipe(tmp_path):
    assert main(ARGS + ["--out", str(tmp_path / "o")]) == 0
    settings = json.loads((tmp_path / "o" / "results.json").read_text())["settings"]
    assert settings["max_new_tokens"] == 8 and settings["temperature"] == 1.0  # recipes/demo.toml [eval]
    assert settings["defaults_from"].endswith("recipes/demo.toml")
    assert main(ARGS + ["--out", str(tmp_path / "p"), "--max-new-tokens", "5"]) == 0
    assert json.loads((tmp_path / "p" / "results.json").read_text())["settings"]["max_new_tokens"] == 5
    with pytest.raises(SystemExit):
        main(["eval", "--recipe"])
