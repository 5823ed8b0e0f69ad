"""Rubric rewards: per-criterion scores kept, weighted mean, judge criteria, and the scores
reaching the step metrics (reward/component/<name>), end to end in a short training run."""

from __future__ import annotations

import json
import math
from collections import Counter

import pytest

from rlvr.errors import ConfigError, RewardError
from rlvr.rewards import CompositeVerdict, MathVerifier, Verdict
from rlvr.rewards.judge import GenRMJudge, JudgeBackend
from rlvr.rewards.rubric import JudgeCriterion, ProgramCriterion, RubricReward


class ByQuestion(JudgeBackend):
    """P(yes) chosen by the question in the judge's text; records the texts it saw."""

    def __init__(self, answers: dict[str, float]):
        self.answers, self.seen = answers, []

    def reason(self, text, k, params):
        return ["ok"] * k

    def next_token_logprobs(self, texts, top):
        self.seen.extend(texts)
        out = []
        for text in texts:
            p = next(v for q, v in self.answers.items() if f"Question: {q}" in text)
            out.append([("yes", math.log(p)), ("no", math.log(1 - p))])
        return out


def short(response: str, gold: str) -> float:
    return 1.0 if len(response) <= 5 else 0.25


def test_weighted_mean_and_every_criterion_kept():
    judge = GenRMJudge(ByQuestion({"Polite?": 0.8}))
    rubric = RubricReward([("correct", ProgramCriterion(MathVerifier(), "correct"), 2.0),
                           ("short", ProgramCriterion(short, "short"), 1.0),
                           ("polite", JudgeCriterion(judge, "Polite?"), 1.0)])
    v = rubric("the answer is 46", "46", prompt="12+34=")
    assert isinstance(v, CompositeVerdict)
    assert v.components == pytest.approx({"correct": 1.0, "short": 0.25, "polite": 0.8})
    assert v.score == pytest.approx((2 * 1.0 + 1 * 0.25 + 1 * 0.8) / 4)  # 0.7625
    assert "Task:\n12+34=" in judge.backend.seen[0] and "Reference answer:\n46" in judge.backend.seen[0]


def test_program_criteria_need_no_prompt_but_judge_criteria_do():
    programs = RubricReward([("short", ProgramCriterion(short, "short"), 1.0)])
    assert programs("ok", "x").score == 1.0
    with_judge = RubricReward([("q", JudgeCriterion(GenRMJudge(ByQuestion({"Q": 0.5})), "Q"), 1.0)])
    with pytest.raises(RewardError, match="needs the prompt"):
        with_judge("ok", "x")


@pytest.mark.parametrize("out", [1.5, math.nan, True, "1"])
def test_a_program_returning_a_bad_value_is_named(out):
    rubric = RubricReward([("odd", ProgramCriterion(lambda r, g: out, "odd"), 1.0)])
    with pytest.raises(RewardError, match="criterion 'odd' returned"):
        rubric("x", "y")


def test_format_cannot_outvote_correctness():
    from rlvr.rewards import FormatVerifier

    with pytest.raises(ValueError, match="format could outvote correctness"):
        RubricReward([("correct", ProgramCriterion(MathVerifier(), "c"), 1.0),
                      ("format", ProgramCriterion(FormatVerifier(), "f"), 1.0)])


def test_built_from_config(monkeypatch, tmp_path):
    from rlvr.config import load_config
    from rlvr.orchestrate.scoring import build_reward_fn

    (tmp_path / "my_checks.py").write_text("def short(response, gold):\n    return 1.0 if len(response) <= 5 else 0.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    rubric = 'reward.rubric=[{name="correct", verifier="math", weight=3.0}, {name="short", function="my_checks:short"}]'
    section = load_config(None, ["reward.verifier=rubric", rubric]).reward
    v = build_reward_fn(section)(response="the answer is 46.", gold="46")
    assert v.components == {"correct": 1.0, "short": 0.0} and v.score == pytest.approx(0.75)
    bad = load_config(None, ["reward.verifier=rubric", "reward.template=think_answer",
                             'reward.rubric=[{name="format", verifier="format"}]']).reward
    with pytest.raises(ConfigError, match="reward.rubric: .*format term"):
        build_reward_fn(bad)
    missing = load_config(None, ["reward.verifier=rubric", 'reward.rubric=[{name="q", question="Good?"}]']).reward
    with pytest.raises(ConfigError, match="judge.model"):
        build_reward_fn(missing)


def test_score_groups_reports_component_means_that_survive_refill_rounds():
    from rlvr.orchestrate.scoring import RunningMean, score_groups
    from rlvr.types import Rollout, Sample

    rubric = RubricReward([("correct", ProgramCriterion(MathVerifier(), "c"), 1.0),
                           ("short", ProgramCriterion(short, "s"), 1.0)])
    rollouts = [[Rollout((1,), (2,), (-0.1,), text, "stop") for text in ("46", "47", "it is 46 indeed")]]
    _, counts = score_groups(rubric, [Sample("12+34=", "46")], rollouts, "fail")
    # correct: 1, 0, 1 -> 2/3; short: 1, 1, 0.25 -> 0.75
    assert float(counts["reward/component/correct"]) == pytest.approx(2 / 3)
    assert float(counts["reward/component/short"]) == pytest.approx(0.75)
    _, more = score_groups(rubric, [Sample("1+1=", "2")], [[Rollout((1,), (2,), (-0.1,), "2", "stop")]], "fail")
    total = Counter(counts)
    total.update(more)  # what dynamic sampling's refill does: the mean is over all 4 samples
    assert float(total["reward/component/correct"]) == pytest.approx(3 / 4)
    assert RunningMean(1.0, 2) + 0 == RunningMean(1.0, 2)
    _, plain = score_groups(lambda r, g: Verdict(1.0, ""), [Sample("p", "1")], rollouts, "fail")
    assert not any(k.startswith("reward/component/") for k in plain)


RUBRIC = ('reward.rubric=[{name="correct", verifier="math", weight=2.0},'
          ' {name="short", function="my_checks:short"}]')


def test_a_short_training_run_logs_the_components(tmp_path, monkeypatch):
    from rlvr.config import load_config
    from rlvr.orchestrate import train

    (tmp_path / "my_checks.py").write_text("def short(response, gold):\n    return 1.0 if len(response) <= 2 else 0.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    data = tmp_path / "task.jsonl"
    data.write_text("".join(json.dumps({"prompt": f"{a}+{b}=", "answer": str(a + b)}) + "\n"
                            for a, b in [(12, 34), (20, 31), (45, 11), (33, 33)]))
    config = load_config(None, [f"run.output_dir={tmp_path}", "run.name=rubric", "model.path=models/tiny-arith",
                                "task.kind=jsonl", f"task.train_path={data}", "train.steps=2",
                                "sampling.prompts_per_step=2", "sampling.group_size=2", "sampling.max_new_tokens=4",
                                "eval.size=0", "log.progress=none", "reward.verifier=rubric", RUBRIC])
    rows = train(config).folder.read_metrics()
    assert len(rows) == 2
    for row in rows:
        c, s = row["reward/component/correct"], row["reward/component/short"]
        assert 0 <= c <= 1 and 0 <= s <= 1
        assert row["reward/mean"] == pytest.approx((2 * c + s) / 3)  # every sample kept (zero_variance=keep)
