"""`rlvr eval-judge` with a reward under test: `reward:` (a plain reward function), `rubric:`
and `rules:` (a recipe's [reward]) and `--recipe` (its [reward.judge]). The judge model is a
fake backend put in place of `model_rewards.judge_backend`: nothing is loaded or downloaded."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

from rlvr.cli.main import main
from rlvr.orchestrate import model_rewards
from rlvr.rewards import Verdict
from rlvr.rewards.judge import JudgeBackend

REPO = Path(__file__).resolve().parents[2]
ROWS = [{"prompt": "23+45=", "response": "68", "label": 1, "gold": "68"},
        {"prompt": "23+45=", "response": "67", "label": 0, "gold": "68"},
        {"prompt": "23+45=", "response": "6800", "label": 0, "gold": "68"},
        {"prompt": "23+45=", "chosen": "68", "rejected": "6800", "gold": "68"}]


class FakeJudge(JudgeBackend):
    """P(yes) = 0.9 when the response is all digits, 0.2 otherwise; for a rule about length,
    0.8 when it has at most 2 characters, else 0.4. Records what it was asked."""

    def __init__(self, section=None):
        self.section, self.tops, self.batches = section, [], []

    def reason(self, text, k, params):
        return ["thinking"] * k

    def next_token_logprobs(self, texts, top):
        self.tops.append(top)
        self.batches.append(len(texts))
        return [self._top(t) for t in texts]

    @staticmethod
    def _top(text: str) -> list[tuple[str, float]]:
        response = re.search(r"Response:\n(.*?)\n", text).group(1)
        if "at most two characters" in text:
            p = 0.8 if len(response) <= 2 else 0.4
        else:
            p = 0.9 if response.isdigit() else 0.2
        return [(" yes", math.log(p)), (" no", math.log(1 - p))]


@pytest.fixture
def fake_judge(monkeypatch):
    made: list[FakeJudge] = []
    monkeypatch.setattr(model_rewards, "judge_backend", lambda section: made.append(FakeJudge(section)) or made[-1])
    return made


@pytest.fixture
def fakes(monkeypatch):
    mod = types.ModuleType("rewardfakes")
    mod.exact = lambda response, gold: float(response.strip() == gold)
    mod.short = lambda response, gold: 1.0 if len(response) <= 2 else 0.0
    mod.verdict = lambda response, gold: Verdict(0.25 if response == gold else 0.75, "")
    mod.two = lambda response, gold: 2.0
    mod.text = lambda response, gold: "yes"
    mod.boolean = lambda response, gold: True

    def raises(response, gold):
        raise ValueError("no gold here")

    def with_prompt(response, gold, prompt):
        return float(prompt == "23+45=" and response == gold)

    with_prompt.needs_prompt = True
    mod.raises, mod.with_prompt = raises, with_prompt
    monkeypatch.setitem(sys.modules, "rewardfakes", mod)
    return mod


def rows_file(tmp_path: Path) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return path


def recipe(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "recipe.toml"
    path.write_text(text)
    return path


def scores(capsys, tmp_path, *argv: str) -> tuple[dict, list[float]]:
    """(the --json result, the saved P(yes) of the 3 pointwise rows + the pair's two orders)."""
    saved = tmp_path / "scored.jsonl"
    code = main(["eval-judge", str(rows_file(tmp_path)), *argv, "--json", "--save-scores", str(saved)])
    out = capsys.readouterr()
    assert code == 0, out.err
    rows = [json.loads(line) for line in saved.read_text().splitlines()]
    return json.loads(out.out), [r["judge_p_yes"] for r in rows[:3]] + \
        [rows[3]["judge_p_chosen_first"], rows[3]["judge_p_rejected_first"]]


def test_a_reward_function_scores_as_p_yes_and_pairs_compare_the_two_scores(capsys, tmp_path, fakes):
    result, p = scores(capsys, tmp_path, "--judge", "reward:rewardfakes:exact")
    assert p == [1.0, 0.0, 0.0, 1.0, 0.0]  # the pair: 0.5 + (1 - 0) / 2, then 0.5 + (0 - 1) / 2
    assert result["pointwise"]["accuracy"]["mean"] == 1.0 and result["pairwise"]["flip_rate"]["mean"] == 0.0
    _, p = scores(capsys, tmp_path, "--judge", "reward:rewardfakes:verdict")  # a Verdict's score
    assert p == [0.25, 0.75, 0.75, 0.25, 0.75]
    _, p = scores(capsys, tmp_path, "--judge", "reward:rewardfakes:with_prompt")  # needs_prompt: gets it
    assert p == [1.0, 0.0, 0.0, 1.0, 0.0]


def test_a_rubric_is_its_weighted_score(capsys, tmp_path, fakes, fake_judge):
    path = recipe(tmp_path, '[reward]\nverifier = "rubric"\n'
                  '[[reward.rubric]]\nname = "correct"\nverifier = "math"\nweight = 3\n'
                  '[[reward.rubric]]\nname = "short"\nfunction = "rewardfakes:short"\nweight = 1\n')
    _, p = scores(capsys, tmp_path, "--judge", f"rubric:{path}")
    assert p == [1.0, 0.25, 0.0, 1.0, 0.0] and fake_judge == []  # program criteria only: no judge built
    path.write_text(path.read_text() + '[[reward.rubric]]\nname = "digits"\nquestion = "Digits only?"\nweight = 4\n')
    _, p = scores(capsys, tmp_path, "--judge", f"rubric:{path}", "--judge-top", "7")
    assert p[:3] == pytest.approx([(3 + 1 + 4 * 0.9) / 8, (1 + 4 * 0.9) / 8, 4 * 0.9 / 8])
    assert set(fake_judge[0].tops) == {7}


def test_a_rules_set_is_the_mean_over_its_rules(capsys, tmp_path, fake_judge):
    path = recipe(tmp_path, '[reward]\nverifier = "rules"\nrules = ["Answer with digits only.", '
                  '"Use at most two characters."]\n[reward.judge]\nbackend = "http"\nurl = "http://x/v1"\n'
                  'samples = 2\nmax_new_tokens = 0\n')
    _, p = scores(capsys, tmp_path, "--judge", f"rules:{path}")
    assert p[:3] == pytest.approx([(0.9 + 0.8) / 2, (0.9 + 0.8) / 2, (0.9 + 0.4) / 2])
    assert p[3:] == pytest.approx([0.5 + 0.2 / 2, 0.5 - 0.2 / 2])
    assert fake_judge[0].section.url == "http://x/v1" and set(fake_judge[0].batches) == {2}  # the recipe's k


def test_a_recipe_judge_takes_its_settings_and_the_flags_over_them(capsys, tmp_path, fake_judge):
    path = recipe(tmp_path, '[reward.judge]\nbackend = "http"\nurl = "http://x/v1"\nsamples = 2\n')
    result, p = scores(capsys, tmp_path, "--recipe", str(path))
    assert result["judge"] == f"recipe:{path}" and p[:3] == pytest.approx([0.9, 0.9, 0.9])
    assert fake_judge[0].section.max_new_tokens == 256 and set(fake_judge[0].batches) == {2}
    scores(capsys, tmp_path, "--recipe", str(path), "--judge-samples", "3", "--judge-max-new-tokens", "0")
    assert fake_judge[1].section.samples == 3 and fake_judge[1].section.max_new_tokens == 0


@pytest.mark.parametrize("argv, recipe_text, message", [
    (["--judge", "rubric:/nonexistent.toml"], None, "/nonexistent.toml: recipe file not found"),
    (["--judge", "rubric:RECIPE"], "[reward]\n", "rubric:RECIPE: the recipe has no [[reward.rubric]] criteria"),
    (["--judge", "rules:RECIPE"], "[reward]\n", "rules:RECIPE: the recipe has no reward.rules"),
    (["--judge", "rules:RECIPE"], '[reward]\nverifier = "rules"\nrules = ["x"]\n',
     "--judge rules:RECIPE: reward.judge.model: the transformers judge needs a model folder"),
    (["--recipe", "RECIPE"], "[reward.judge]\nsamples = 0\n", "RECIPE: reward.judge.samples: Input should be greater"),
    (["--recipe", "RECIPE", "--judge-samples", "0"], "", "--judge-samples: Input should be greater than"),
    (["--recipe", "RECIPE", "--judge", "reward:rewardfakes:exact"], "", "--recipe names the judge under test"),
    (["--judge", "reward:rewardfakes"], None, "--judge reward:rewardfakes: expected reward:package.module:function"),
    (["--judge", "reward:rewardfakes:nothing"], None, "rewardfakes has no function 'nothing'"),
    (["--judge", "reward:rewardfakes:two"], None, "rows.jsonl:1: reward rewardfakes:two returned 2.0, not a score in [0, 1]"),
    (["--judge", "reward:rewardfakes:text"], None, "rows.jsonl:1: reward rewardfakes:text returned str, expected"),
    (["--judge", "reward:rewardfakes:boolean"], None, "returned bool, expected a float or Verdict"),
    (["--judge", "reward:rewardfakes:raises"], None, "rows.jsonl:1: reward rewardfakes:raises raised ValueError: no gold here"),
])
def test_errors_are_one_line_with_exit_status_2(capsys, tmp_path, fakes, argv, recipe_text, message):
    if recipe_text is not None:
        path = recipe(tmp_path, recipe_text)
        argv, message = [a.replace("RECIPE", str(path)) for a in argv], message.replace("RECIPE", str(path))
    code = main(["eval-judge", str(rows_file(tmp_path)), *argv])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1, err


def test_a_reward_function_judge_never_imports_torch(tmp_path):
    (tmp_path / "plainreward.py").write_text("def exact(response, gold):\n    return float(response == gold)\n")
    probe = ("import sys; from rlvr.cli.main import main; "
             "code = main(['eval-judge', '--judge', 'reward:plainreward:exact', '--json']); "
             "print(code, 'torch' in sys.modules, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": f"{REPO / 'src'}:{tmp_path}", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0 and done.stderr.strip().endswith("0 False"), done.stderr
