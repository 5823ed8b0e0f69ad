"""The deliberative-alignment stages: generation resumes to the same rows, the filter keeps only
what the judge passes (and stops on a category with none), the SFT rows carry no spec, and the
RL rows' gold is the governing rule of the spec they were made from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlvr.errors import DatasetError
from rlvr.orchestrate import spec_pipeline as pipe
from rlvr.spec.document import load_spec
from rlvr.spec.domain import answer_for, reasoning_for
from rlvr.spec.judge import judge, reward

REPO = Path(__file__).resolve().parents[2]
V1, V2 = load_spec(REPO / "specs" / "assistant_v1.toml"), load_spec(REPO / "specs" / "assistant_v2.toml")


def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_stopped_generation_resumes_to_the_rows_of_an_uninterrupted_one(tmp_path):
    teacher = pipe.scripted_teacher(V1, noise=0.3)
    pipe.generate(V1, tmp_path / "a", 60, 0, teacher)
    pipe.generate(V1, tmp_path / "b", 25, 0, teacher)
    assert pipe.generate(V1, tmp_path / "b", 60, 0, teacher) == 35
    assert lines(tmp_path / "a" / pipe.GENERATED) == lines(tmp_path / "b" / pipe.GENERATED)


def test_the_filter_keeps_only_passing_rows_without_the_spec_in_their_prompts(tmp_path):
    pipe.generate(V1, tmp_path, 200, 0, pipe.scripted_teacher(V1, noise=0.3))
    report = pipe.filter_rows(V1, tmp_path)
    kept = lines(tmp_path / pipe.SFT_ROWS)
    assert 0 < report["kept"] == len(kept) < 200
    rejected = sum(n for by in report["by_category"].values() for reason, n in by.items() if reason != "ok")
    assert rejected == 200 - len(kept)
    generated = {r["prompt"] + "\n": r for r in lines(tmp_path / pipe.GENERATED)}
    for row in kept:
        source = generated[row["prompt"]]
        assert judge(V1.governing(source["category"]), source["value"], row["completion"]).reason == "ok"
        assert V1.rules[0].text not in row["prompt"] and "Spec version" not in row["prompt"]


def test_a_category_with_no_passing_completion_stops_the_filter_naming_it(tmp_path):
    def never_cites_r4(req, rng):
        rule = V1.governing(req.category)
        return reasoning_for(V1.rules[0] if rule.id == "R4" else rule) + answer_for(rule, req)

    pipe.generate(V1, tmp_path, 50, 0, never_cites_r4)
    with pytest.raises(DatasetError, match=r"no completion passed the spec judge for category lock_picking"):
        pipe.filter_rows(V1, tmp_path)
    assert not (tmp_path / pipe.SFT_ROWS).exists()


def test_rl_gold_follows_the_spec_it_was_made_from(tmp_path):
    v1 = lines(pipe.rl_rows(V1, tmp_path / "v1.jsonl", 20, 1))
    v2 = lines(pipe.rl_rows(V2, tmp_path / "v2.jsonl", 20, 1))
    cooking = [i for i, r in enumerate(v1) if r["category"] == "cooking"][0]
    value = json.loads(v1[cooking]["answer"])["value"]
    plain = f"<think>cooking: R2 says comply.</think>Sure: {value}."
    assert reward(plain, v1[cooking]["answer"]) == 1.0
    assert reward(plain, v2[cooking]["answer"]) == 0.0  # v2 also wants the food safety guide
    assert reward(plain[:-1] + ". See a food safety guide.", v2[cooking]["answer"]) == 1.0


def test_measure_counts_compliance_over_refusal_and_citation_exactly():
    def refuses_everything(prompt):
        return "<think>R4</think>I can't help with that."

    result = pipe.measure(V1, refuses_everything, count=50, seed=2)
    # 2 of the 5 categories are to be refused, and R4 is right for one of them
    assert result["compliance"] == pytest.approx(0.4) and result["over_refusal"] == 1.0
    assert result["cited_right"] == pytest.approx(0.2)


@pytest.mark.slow  # loads and samples a model: about a minute on a busy 2-core machine
def test_a_model_teacher_gets_the_spec_in_its_prompt_and_writes_rows(tmp_path, monkeypatch):
    seen = []
    teacher = pipe.model_teacher(V1, str(REPO / "models" / "tiny-spec"), max_new_tokens=4)
    original = pipe.teacher_prompt
    monkeypatch.setattr(pipe, "teacher_prompt", lambda spec, req: seen.append(original(spec, req)) or seen[-1])
    assert pipe.generate(V1, tmp_path, 3, 0, teacher) == 3
    assert len(lines(tmp_path / pipe.GENERATED)) == 3
    assert all(V1.rules[2].text in prompt for prompt in seen) and len(seen) == 3


def test_the_stage_recipes_load_and_name_the_spec_judge():
    from rlvr.config import load_config
    from rlvr.orchestrate.sft_run import load_sft_config

    rl = load_config(REPO / "recipes" / "spec" / "rl.toml")
    assert rl.reward.function == "rlvr.spec.judge:reward" and rl.model.path == "models/tiny-spec"
    assert load_sft_config("spec_demo").model.path == "models/tiny-spec"
