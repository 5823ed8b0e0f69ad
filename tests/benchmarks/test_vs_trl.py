"""benchmarks/vs_trl.py: the plan alternates the sides, ratios pair runs next to each other,
both sides get the same settings, and the smallest point runs end to end (slow)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "benchmarks"
sys.path.insert(0, str(BENCH))

import vs_trl  # noqa: E402
import vs_trl_sides  # noqa: E402

SPEC = dict(name="t", group=8, prompts_per_step=2, new_tokens=64, min_new_tokens=64, steps=3,
            aggregation="token_mean", lr=1e-5, micro_batch=16, reward="last_int", rollout_bound=True,
            threads=2, mode="sync", max_staleness=0)


def run_script(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, str(BENCH / "vs_trl.py"), *args], capture_output=True, text=True,
                          env=env, timeout=600)


def test_plan_alternates_and_adds_async_only_where_rollout_bound():
    order = [(r["side"], r["mode"]) for r in vs_trl.plan(SPEC, 2, with_async=True)]
    assert order == [("rlvr", "sync"), ("trl", "sync"), ("rlvr", "async")] * 2
    assert all(r["max_staleness"] == 1 for r in vs_trl.plan(SPEC, 1, True) if r["mode"] == "async")
    bound_off = vs_trl.plan({**SPEC, "rollout_bound": False}, 2, with_async=True)
    assert [r["side"] for r in bound_off] == ["rlvr", "trl", "rlvr", "trl"]


def test_plan_and_summaries_with_two_worker_counts():
    order = [(r["side"], r["mode"], r.get("rollout_workers")) for r in vs_trl.plan(SPEC, 2, True, (1, 2))]
    assert order == [("rlvr", "sync", 1), ("rlvr", "sync", 2), ("trl", "sync", None), ("rlvr", "async", 1)] * 2
    runs = [{**fake("rlvr", 2.0, 900), "rollout_workers": 1}, {**fake("rlvr", 1.0, 1200), "rollout_workers": 2},
            fake("trl", 4.0, 1000), {**fake("rlvr", 3.0, 900), "rollout_workers": 1},
            {**fake("rlvr", 2.0, 1200), "rollout_workers": 2}, fake("trl", 4.0, 1000)]
    one, two = vs_trl.summaries_by_workers("t", SPEC, runs)
    assert (one["workload"], one["s_per_step_ratio"], one["rss_ratio"]) == ("t (1 workers)", [0.5, 0.75], 0.9)
    assert (two["workload"], two["s_per_step_ratio"], two["rss_ratio"]) == ("t (2 workers)", [0.25, 0.5], 1.2)
    assert one["name"] == two["name"] == "t"
    [alone] = vs_trl.summaries_by_workers("t", SPEC, [r for r in runs if r.get("rollout_workers") != 2])
    assert alone["workload"] == "t"


def fake(side: str, s: float, rss: float, mode: str = "sync") -> dict:
    return {"side": side, "mode": mode, "s_per_step": s, "generation_s": s / 2, "scoring_s": 0.0,
            "training_s": s / 2, "peak_rss_mib": rss, "peak_tree_pss_mib": rss / 2, "rss_after_import_mib": 400.0,
            "completion_tokens": [1024.0], "load_before": [3.0], "load_after": [4.0]}


def test_summary_pairs_each_rlvr_run_with_the_trl_run_after_it():
    runs = [fake("rlvr", 1.0, 900), fake("trl", 2.0, 1000), fake("rlvr", 0.5, 500, "async"),
            fake("rlvr", 3.0, 900), fake("trl", 4.0, 1000), fake("rlvr", 1.5, 500, "async")]
    s = vs_trl.summarize("t", SPEC, runs)
    assert s["s_per_step_ratio"] == [0.5, 0.75]
    assert s["async_over_sync"] == [0.5, 0.5]
    assert s["rss_ratio"] == pytest.approx(0.9)  # async runs are not rlvr's sync memory
    assert s["pss_ratio"] == pytest.approx(0.9) and s["rlvr"]["peak_tree_pss_mib"] == 450
    no_pss = vs_trl.summarize("t", SPEC, [{**r, "peak_tree_pss_mib": None} for r in runs])
    assert no_pss["pss_ratio"] is None and no_pss["rlvr"]["peak_tree_pss_mib"] is None


def test_rlvr_recipe_carries_the_spec(tmp_path):
    from rlvr.config import load_config

    rows = tmp_path / "p.jsonl"
    rows.write_text('{"prompt": "What is 1+2? Answer:", "answer": "3"}\n')
    recipe = tmp_path / "r.toml"
    recipe.write_text(vs_trl_sides.rlvr_config_text({**SPEC, "model_dir": "models/tiny-arith",
                                                     "prompts_path": str(rows), "mode": "async",
                                                     "max_staleness": 1}, str(tmp_path)))
    c = load_config(recipe)
    assert (c.sampling.group_size, c.sampling.prompts_per_step) == (8, 2)
    assert (c.sampling.max_new_tokens, c.sampling.min_new_tokens, c.sampling.temperature) == (64, 64, 1.0)
    assert (c.algo.aggregation, c.algo.eps_low, c.train.lr, c.train.micro_batch_size) == ("token_mean", 0.2, 1e-5, 16)
    assert (c.orchestrate.mode, c.orchestrate.max_staleness, c.eval.size) == ("async", 1, 0)
    assert c.reward.function == "vs_trl_sides:last_int" and c.train.gradient_checkpointing is False
    recipe.write_text(vs_trl_sides.rlvr_config_text({**SPEC, "model_dir": "models/tiny-arith", "prompts_path": str(rows),
                                                     "gradient_checkpointing": True, "rollout_workers": 2}, str(tmp_path)))
    c = load_config(recipe)
    assert c.train.gradient_checkpointing is True and c.orchestrate.rollout_workers == 2


def test_trl_config_carries_the_spec(tmp_path):
    pytest.importorskip("trl")
    a = vs_trl_sides.trl_args(SPEC, str(tmp_path))
    assert (a.num_generations, a.generation_batch_size, a.steps_per_generation) == (8, 16, 1)
    assert (a.max_completion_length, a.generation_kwargs, a.temperature, a.top_k) == (64, {"min_new_tokens": 64}, 1.0, 0)
    assert (a.loss_type, a.beta, a.epsilon, a.learning_rate, a.max_steps) == ("dapo", 0.0, 0.2, 1e-5, 3)
    demo = vs_trl_sides.trl_args({**SPEC, "min_new_tokens": 0, "aggregation": "seq_mean_token_mean"}, str(tmp_path))
    assert (demo.generation_kwargs, demo.loss_type) == (None, "grpo")
    # TRL's own default is True: left alone, its side recomputes activations and rlvr's does not
    assert a.activation_checkpointing is False and a.gradient_checkpointing is False
    on = vs_trl_sides.trl_args({**SPEC, "gradient_checkpointing": True}, str(tmp_path))
    assert on.activation_checkpointing is True


@pytest.mark.parametrize("text, gold, want", [("12 then 45", "45", 1.0), ("45 then 12", "45", 0.0),
                                              ("no digits", "3", 0.0), ("x=-7", "-7", 1.0)])
def test_workload_reward_is_the_last_integer(text, gold, want):
    assert vs_trl_sides.last_int(text, gold) == want


def test_unknown_workload_is_refused_in_one_line():
    proc = run_script("--only", "w1,g9", "--dry-run")
    assert proc.returncode == 2
    assert "unknown workload(s) g9" in proc.stderr and "Traceback" not in proc.stderr


def test_dry_run_prints_the_plan_and_the_differences():
    proc = run_script("--only", "w1,g2", "--dry-run")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "w1: 4.0M, V 128, G 8 x P 8, L 64, 10 steps; runs in order: rlvr, trl, rlvr, trl" in proc.stdout
    assert "g2: 4.0M, V 128, G 8 x P 2, L 256" in proc.stdout and "rlvr, trl, rlvr-async" in proc.stdout
    assert all(d in proc.stdout for d in vs_trl.DIFFERENCES)


@pytest.mark.slow
def test_smallest_point_runs_both_sides_end_to_end(tmp_path):
    out = tmp_path / "r.json"
    proc = run_script("--only", "g1", "--steps", "2", "--rounds", "1", "--no-async", "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    (summary,) = result["summaries"]
    assert [r["side"] for r in result["runs"]] == ["rlvr", "trl"]
    assert summary["rlvr"]["completion_tokens"] == summary["trl"]["completion_tokens"] == 2 * 8 * 64
    assert summary["s_per_step_ratio_median"] > 0 and summary["rss_ratio"] > 0
    assert "| g1 |" in proc.stdout


def test_a_side_reports_its_own_peak_not_the_forking_parents():
    """ru_maxrss carries the parent's peak across fork + exec; the side reads VmHWM instead."""
    ballast = bytearray(400 * 2**20)
    ballast[::4096] = b"\x01" * len(ballast[::4096])  # resident, not just reserved
    code = f"import sys; sys.path.insert(0, {str(BENCH)!r}); import vs_trl_sides; print(vs_trl_sides.peak_rss_mib())"
    peak = float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert 0 < peak < 300 < vs_trl_sides.rss_mib("VmRSS") and vs_trl_sides.peak_rss_mib() >= 400
    del ballast
