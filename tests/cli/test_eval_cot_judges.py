"""`rlvr eval --cot-judge`: several judges combined by any / all / majority, a judging pass that
resumes after a stop, and the reward:, rules: and recipe: judges (tests/cli/test_eval_judge_rewards.py's
fake GenRM backend, nothing loaded)."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest

from rlvr.evaluate.judge_rules import combine, split_spec
from rlvr.orchestrate import model_rewards

sys.path.insert(0, str(Path(__file__).parent))  # the sibling test modules' helpers and fake judge
from test_eval_cot_cli import eval_cot, write_rows  # noqa: E402
from test_eval_judge_rewards import FakeJudge  # noqa: E402

RESPONSES = ["7*8=56, so 56", "I think 56", "56!", "7*8=56 hence 56"]


@pytest.fixture
def judges(monkeypatch):
    """Three function judges with fixed opinions, and a count of the questions put to them."""
    mod = types.ModuleType("cotfakes")
    mod.calls = 0

    def make(p_by_text):
        def ask(prompt, response, question, reference):
            mod.calls += 1
            return p_by_text(response)
        return ask

    mod.equation = make(lambda r: 0.9 if "=" in r else 0.1)  # right for samples 1 and 4
    mod.says_so = make(lambda r: 0.8 if "so" in r or "hence" in r else 0.3)  # 1, 4
    mod.generous = make(lambda r: 0.7 if r != "56!" else 0.2)  # 1, 2, 4
    monkeypatch.setitem(sys.modules, "cotfakes", mod)
    return mod


def test_rules_combine_verdicts_by_hand():
    assert combine([0.9, 0.2, 0.6], 0.5, "majority").right and combine([0.9, 0.2, 0.6], 0.5, "majority").p == 2 / 3
    assert not combine([0.9, 0.2, 0.6, 0.1], 0.5, "majority").right  # 2 of 4 is a tie, not a majority
    assert combine([0.9, 0.2], 0.5, "any").right and not combine([0.9, 0.2], 0.5, "all").right
    assert split_spec("all:function:a:b + model:DIR") == ("all", ["function:a:b", "model:DIR"])
    assert split_spec("function:a:b") == (None, ["function:a:b"])


@pytest.mark.parametrize("rule", ["any", "all", "majority"])
def test_several_judges_per_sample(tmp_path, capsys, judges, rule):
    samples = write_rows(tmp_path / "s.jsonl", RESPONSES)
    spec = f"{rule}:function:cotfakes:equation + function:cotfakes:says_so + function:cotfakes:generous"
    code, _, err = eval_cot(capsys, "--samples", str(samples), "--out", str(tmp_path / "o"), "--cot-judge", spec)
    assert code == 0, err
    rows = [json.loads(x) for x in (tmp_path / "o" / "cot_judgements.jsonl").read_text().splitlines()]
    verdicts = [r["meta"]["cot_correct"] for r in rows]
    # votes per sample: 1: 3/3, 2: 1/3 (generous only), 3: 0/3, 4: 3/3
    expected = {"any": [True, True, False, True], "all": [True, False, False, True],
                "majority": [True, False, False, True]}[rule]
    assert verdicts == expected and [r["cot_p"] for r in rows] == pytest.approx([1, 1 / 3, 0, 1])
    assert judges.calls == 12  # 3 judges x 4 samples


def test_samples_with_several_verdicts_a_row(tmp_path, capsys):
    rows = [{"prompt": "What is 7*8?", "response": r, "gold": "56", "cot_p": ps}
            for r, ps in zip(RESPONSES, ([0.9, 0.9, 0.1], [0.9, 0.1, 0.1], [0.1, 0.1, 0.1], [0.9, 0.9, 0.9]))]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, _, err = eval_cot(capsys, "--samples", str(path), "--out", str(tmp_path / "o"), "--cot-judge", "samples:all")
    assert code == 0, err
    assert json.loads((tmp_path / "o" / "results.json").read_text())["model"]["cot"]["samples"][
        "answer_right_reasoning_right"] == 1
    code, _, err = eval_cot(capsys, "--samples", str(path), "--out", str(tmp_path / "p"), "--cot-judge", "samples")
    assert code == 2 and "s.jsonl:1: field 'cot_p' must be a probability" in err


def test_a_stopped_judging_pass_resumes_without_asking_again(tmp_path, capsys, judges):
    samples = write_rows(tmp_path / "s.jsonl", RESPONSES)
    argv = ["--samples", str(samples), "--out", str(tmp_path / "o"), "--cot-judge", "function:cotfakes:generous"]
    assert eval_cot(capsys, *argv)[0] == 0 and judges.calls == 4
    first = (tmp_path / "o" / "cot_judgements.jsonl").read_text()
    progress = tmp_path / "o" / "cot_progress.jsonl"
    lines = progress.read_text().splitlines()
    assert len(lines) == 5 and json.loads(lines[0])["settings"]["judge"] == "function:cotfakes:generous"
    progress.write_text("\n".join(lines[:3]) + "\n" + lines[3][:15])  # stopped after 2, killed mid-line
    assert eval_cot(capsys, *argv)[0] == 0
    assert judges.calls == 6  # only the 2 samples not saved were asked again
    assert (tmp_path / "o" / "cot_judgements.jsonl").read_text() == first
    assert len(progress.read_text().splitlines()) == 5
    code, _, err = eval_cot(capsys, "--samples", str(samples), "--out", str(tmp_path / "o"), "--cot-judge",
                            "function:cotfakes:equation")
    assert code == 2 and "cot_progress.jsonl: an earlier CoT judging pass with other settings" in err


def test_reward_rules_and_recipe_judges(tmp_path, capsys, monkeypatch):
    made = []
    monkeypatch.setattr(model_rewards, "judge_backend", lambda section: made.append(FakeJudge(section)) or made[-1])
    mod = types.ModuleType("cotrewards")
    mod.has_equation = lambda response, gold: float("=" in response)
    monkeypatch.setitem(sys.modules, "cotrewards", mod)
    samples = write_rows(tmp_path / "s.jsonl", ["7*8=56", "56"])
    recipe = tmp_path / "r.toml"
    recipe.write_text('[reward]\nverifier = "rules"\nrules = ["Show the working."]\n'
                      '[reward.judge]\nbackend = "http"\nurl = "http://x/v1"\n')
    for i, spec in enumerate(("reward:cotrewards:has_equation", f"rules:{recipe}", f"recipe:{recipe}")):
        code, _, err = eval_cot(capsys, "--samples", str(samples), "--out", str(tmp_path / f"o{i}"), "--cot-judge", spec)
        assert code == 0, (spec, err)
        ps = [json.loads(x)["cot_p"] for x in (tmp_path / f"o{i}" / "cot_judgements.jsonl").read_text().splitlines()]
        # has_equation: 1, 0. FakeJudge: P(yes) = 0.2 for "7*8=56" (not all digits), 0.9 for "56"
        assert ps == pytest.approx([1.0, 0.0] if i == 0 else [0.2, 0.9]), spec
    assert made and made[-1].section.url == "http://x/v1"
    code, _, err = eval_cot(capsys, "--samples", str(samples), "--out", str(tmp_path / "e"), "--cot-judge",
                            "recipe:/nonexistent.toml")
    assert code == 2 and "--cot-judge recipe:/nonexistent.toml: no such recipe file" in err

