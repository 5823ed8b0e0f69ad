"""benchmarks/recipes.py and its second task (scripts/make_scratchpad_model.py, models/tiny-scratch):
the shipped task files are what the script promises, every recipe loads on the scratchpad task
with its length-tied settings rescaled, one training step runs, and the summary and the table
section writer do what they say."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRATCH = REPO / "models" / "tiny-scratch"


def _module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


bench = _module("bench_recipes", REPO / "benchmarks" / "recipes.py")
make = _module("make_scratchpad_model", REPO / "scripts" / "make_scratchpad_model.py")


def test_scratchpad_worked_solution_scores_and_a_cut_one_does_not():
    from rlvr.rewards.exact_verifier import ExactVerifier

    text = make.scratchpad([3, 5, 8, 2])  # 3+5=8, 8+8=16, 16+2=18
    assert text == "3+5=8\n8+8=16\n16+2=18\n18"
    assert ExactVerifier()(response=text, gold="18").score == 1.0
    assert ExactVerifier()(response=text[:-3], gold="18").score == 0.0  # cut before the total


def test_shipped_task_files_hold_correct_disjoint_sums():
    from rlvr.tasks import load_jsonl

    train, test = load_jsonl(SCRATCH / "task" / "train.jsonl"), load_jsonl(SCRATCH / "task" / "test.jsonl")
    assert (len(train), len(test)) == (make.TRAIN_SIZE, make.TEST_SIZE)
    assert not {s.prompt for s in train} & {s.prompt for s in test}
    counts = set()
    for s in train + test:
        terms = [int(x) for x in s.prompt.removesuffix("=").split("+")]
        assert s.answer == str(sum(terms)), s.source
        counts.add(len(terms))
    assert counts == set(range(make.MIN_TERMS, make.MAX_TERMS + 1))
    # The longest worked solution fits the benchmark's budget, with room to ramble past it.
    longest = max(len(make.scratchpad([int(x) for x in s.prompt[:-1].split("+")])) for s in test)
    assert longest < bench.TASKS["scratchpad"].budget
    config = json.loads((SCRATCH / "config.json").read_text())
    assert config["max_position_embeddings"] >= 256


def test_budget_overrides_rescale_dr_grpo_and_dapo():
    recipes = REPO / "recipes"
    # Dr. GRPO's C is the budget: the recipe leaves it unset, so it follows 8 -> 64 by itself.
    # DAPO's overlong window keeps its share: 2 of 8 -> 16 of 64.
    from rlvr.config import load_config
    from rlvr.orchestrate.plan import objective_args

    dr_grpo = bench.budget_overrides(recipes / "dr_grpo.toml", 64)
    assert not any("aggregation_constant" in o for o in dr_grpo)
    assert objective_args(load_config(recipes / "dr_grpo.toml", dr_grpo))["aggregation_constant"] == 64.0
    assert "sampling.overlong_cache=16" in bench.budget_overrides(recipes / "dapo.toml", 64)
    assert bench.budget_overrides(recipes / "grpo.toml", 64) == ["sampling.max_new_tokens=64",
                                                                  "eval.max_new_tokens=64"]
    assert len(bench.budget_overrides(recipes / "dr_grpo.toml", 8)) == 2  # the recipe's own budget: as written


@pytest.mark.parametrize("name", sorted(p.stem for p in (REPO / "recipes").glob("*.toml")
                                        if p.stem not in bench.NOT_BENCHMARKED))
def test_every_benchmarked_recipe_loads_on_the_scratchpad_task(name):
    from rlvr.config import load_config

    config = load_config(REPO / "recipes" / f"{name}.toml", bench.task_overrides(name, bench.TASKS["scratchpad"]))
    assert config.task.kind == "jsonl" and config.sampling.max_new_tokens == 64
    assert config.train.updates_per_batch == 2


def test_one_training_step_on_the_scratchpad_task(tmp_path):
    from rlvr.config import load_config
    from rlvr.orchestrate import train

    config = load_config(REPO / "recipes" / "grpo.toml", [
        *bench.task_overrides("grpo", bench.TASKS["scratchpad"]), f"run.output_dir={tmp_path}", "run.name=t",
        "train.steps=1", "sampling.prompts_per_step=2", "sampling.group_size=4", "eval.every=0", "eval.size=0",
        "checkpoint.every_minutes=0", "log.progress=none"])
    rows = train(config).folder.read_metrics()
    step = next(r for r in rows if "response/length_mean" in r)
    # The SFT'd model writes a scratchpad: several lines, not a bare number.
    assert step["response/length_mean"] > 6
    summary = bench.summarize(rows, 0.25, 1.0)
    assert summary["curve"][0] == (0, 0.25) and summary["length"] == step["response/length_mean"]


def test_summarize_uses_the_last_quarter_and_sums_the_clip_indicators():
    rows = [{"step": s, "response/length_mean": 10.0 * s, "response/truncated_frac": 0.0 if s < 4 else 0.5,
             "loss/policy": 0.0, "policy/clip_low_frac": 0.01, "policy/clip_high_frac": 0.02 * (s == 4)}
            for s in range(1, 5)] + [{"step": 4, "eval/accuracy": 0.5}]
    out = bench.summarize(rows, 0.2, 3.0)
    assert out["curve"] == [(0, 0.2), (4, 0.5)]
    assert out["length"] == 40.0 and out["truncated"] == 0.5  # the last quarter of 4 steps: step 4
    assert out["clipped"] == pytest.approx((0.01 * 4 + 0.02) / 4)  # mean over all steps


def test_write_section_replaces_only_its_own_table(tmp_path):
    path = tmp_path / "table.md"
    bench.write_section(path, "demo", "A\n")
    path.write_text("intro\n" + path.read_text() + "reading\n")
    bench.write_section(path, "scratchpad", "B\n")
    bench.write_section(path, "demo", "C\n")
    text = path.read_text()
    assert text.startswith("intro\n") and "reading\n" in text
    assert "C\n" in text and "A\n" not in text and "B\n" in text
    assert text.index("C\n") < text.index("reading") < text.index("B\n")


def test_table_reports_the_best_evaluation_and_unrecorded_columns():
    runs = {"grpo": [{"curve": [(0, 0.3), (10, 0.4), (20, 0.2)], "length": 40.0, "truncated": 0.0, "clipped": 0.01},
                     {"curve": [(0, 0.3), (10, 0.3), (20, 0.4)], "length": 42.0, "truncated": 0.0, "clipped": 0.03}],
            "old": [{"curve": [(0, 0.3), (10, 0.5)], "length": None, "truncated": None, "clipped": None}]}
    rows = {line.split(" | ")[0].strip("| "): line for line in bench.table(runs).splitlines()[2:]}
    # grpo: step 10 averages 35%, step 20 30% (step 0 is the shared start, not a result).
    assert "| 30.0% | 20.0%, 40.0% | +0.0 | 35.0% (step 10) | 41.0 | 0.0% | 2.00% |" in rows["grpo"]
    assert rows["old"].endswith("| not recorded | not recorded | not recorded |")
