"""`rlvr eval` on an environment recipe resumes a stopped evaluation (--chunk-prompts): the
done chunks of tasks are not played again and the results equal an uninterrupted run's."""

from __future__ import annotations

import json
from pathlib import Path

from rlvr.cli.main import main
from rlvr.orchestrate.episode_eval import EpisodeEvaluator, eval_seeds

REPO = Path(__file__).resolve().parents[2]
ARGS = ["eval", str(REPO / "models" / "tiny-env"), "--recipe", "env_guess_number", "--n", "2", "--k", "1,2",
        "--limit", "6", "--chunk-prompts", "2"]


def played_tasks(monkeypatch, stop_after: int | None = None) -> list[str]:
    """Record the tasks played; raise KeyboardInterrupt on chunk stop_after + 1."""
    monkeypatch.undo()
    seen, calls, real = [], [], EpisodeEvaluator.play

    def spy(self, engine, tasks, *args, **kwargs):
        if stop_after is not None and len(calls) == stop_after:
            raise KeyboardInterrupt
        calls.append(1)
        seen.extend(t.source for t in tasks)
        return real(self, engine, tasks, *args, **kwargs)

    monkeypatch.setattr(EpisodeEvaluator, "play", spy)
    return seen


def outputs(out: Path) -> tuple[dict, list[str]]:
    return json.loads((out / "results.json").read_text()), (out / "episodes.jsonl").read_text().splitlines()


def test_a_stopped_episode_eval_resumes_to_the_same_results(tmp_path, monkeypatch, capsys):
    assert main(ARGS + ["--out", str(tmp_path / "whole")]) == 0
    # Chunks keep each episode's seed of its place in the whole list (task i // 2 of 6).
    assert [json.loads(e)["episode"]["seed"] for e in outputs(tmp_path / "whole")[1]] == eval_seeds(0, 12)
    out = tmp_path / "stopped"
    played_tasks(monkeypatch, stop_after=2)  # killed while playing the third chunk
    assert main(ARGS + ["--out", str(out)]) == 130
    progress = out / "progress_model.jsonl"
    assert len(progress.read_text().splitlines()) == 3  # settings + 2 chunks
    with progress.open("a") as f:
        f.write('{"chunk": 2, "groups": [{"prom')  # a line torn by kill -9
    seen = played_tasks(monkeypatch)
    assert main(ARGS + ["--out", str(out)]) == 0
    assert "resuming model: 4 of 6 tasks done" in capsys.readouterr().out
    assert len(seen) == 2  # only the last chunk was played again
    assert outputs(out) == outputs(tmp_path / "whole")
    seen.clear()
    assert main(ARGS + ["--out", str(out)]) == 0 and seen == []  # all done: nothing played


def test_resume_refuses_other_settings_and_fresh_starts_over(tmp_path, capsys):
    out = tmp_path / "o"
    assert main(ARGS + ["--out", str(out)]) == 0
    assert main(ARGS[:-1] + ["3", "--out", str(out)]) == 2
    assert "a partial evaluation with other settings (chunk_prompts differ)" in capsys.readouterr().err
    assert main(ARGS[:-1] + ["3", "--out", str(out), "--fresh"]) == 0
