"""summarize / disagreement mining / compare on hand-made groups."""

from __future__ import annotations

import pytest

from rlvr.evaluate.compare import align_by_prompt, compare_groups
from rlvr.evaluate.disagreement import answer_entropy, mine_disagreements, scattered_prompts, verdict_entropy
from rlvr.evaluate.summary import EvalError, summarize

from .helpers import group

GROUPS = [
    group("1+1=", "2", ["2", "2", "2", "2"], [-0.1, -0.2, -0.3, -0.4]),      # c=4
    group("2+2=", "4", ["4", "5", "5", "6"], [-0.9, -0.1, -0.5, -0.5]),      # c=1, top log-prob wrong
    group("3+3=", "6", ["7", "8", None, "9"], [-0.1, -0.1, -0.1, -0.1]),     # c=0, no answer once
    group("4+4=", "8", ["8", "8", "1", "1"], [-0.5, -0.2, -0.3, -0.4]),      # c=2, 2-2 tie
]


def test_summary_metrics_by_hand():
    result = summarize(GROUPS, [1, 2, 4])
    # pass@1 = mean(c/n) = (1 + 1/4 + 0 + 1/2) / 4 = 0.4375
    assert result["pass_at_k"]["1"]["mean"] == pytest.approx(0.4375)
    # pass@4 = share with c > 0 = 3/4
    assert result["pass_at_k"]["4"]["mean"] == pytest.approx(0.75)
    # maj@4: 1 (all 2), 0 (5 wins), 0 (three-way tie of wrong), 0.5 (8 vs 1 tie) -> 1.5 / 4
    assert result["maj_at_k"]["4"]["mean"] == pytest.approx(0.375)
    # best-of-4 by log-prob picks -0.1 (right), -0.1 (5, wrong), first -0.1 (7, wrong), -0.2 (8, right)
    assert result["best_of_n"]["logprob"]["mean"] == pytest.approx(0.5)
    assert result["best_of_n"]["verifier"]["mean"] == pytest.approx(0.75)
    assert result["pass_rate_histogram"] == {"values": [0, 0.25, 0.5, 0.75, 1.0], "counts": [1, 1, 1, 0, 1]}
    assert result["per_prompt"][1]["top_answer"] == "5"


def test_best_of_n_needs_logprobs_and_k_needs_samples():
    no_lp = [group("1+1=", "2", ["2", "3"])]
    assert summarize(no_lp, [1])["best_of_n"]["logprob"] is None
    with pytest.raises(EvalError, match="needs at least 4 samples per prompt"):
        summarize(no_lp, [4])


def test_disagreements_ranked_by_verdict_then_answer_entropy():
    rows = mine_disagreements(GROUPS)
    # 1+1= agrees fully and is left out; 4+4= (2/4, H_v = 1) ranks before 2+2= (1/4);
    # 3+3= (0/4, H_v = 0) is all wrong: its four distinct answers are counted, not listed.
    assert [r["prompt"] for r in rows] == ["4+4=", "2+2="]
    assert [r["rank"] for r in rows] == [1, 2]
    assert scattered_prompts(GROUPS) == 1
    assert rows[0]["verdict_entropy"] == pytest.approx(1.0)
    assert rows[1]["answers"] == {"5": 2, "4": 1, "6": 1}
    assert len(rows[0]["samples"]) == 4 and rows[0]["samples"][0]["correct"] is True
    assert verdict_entropy(1, 4) == pytest.approx(0.8112781)  # -(1/4 log2 1/4 + 3/4 log2 3/4)
    assert answer_entropy(GROUPS[2]) == pytest.approx(2.0)  # four equally likely answers
    assert verdict_entropy(0, 4) == 0.0 and str(verdict_entropy(0, 4)) == "0.0"


def test_compare_counts_solved_and_lost_with_a_paired_difference():
    after = [group("1+1=", "2", ["3", "3", "3", "3"]), group("2+2=", "4", ["4", "4", "4", "4"]),
             group("3+3=", "6", ["6", "8", "8", "9"]), group("4+4=", "8", ["8", "8", "8", "1"])]
    out = compare_groups(GROUPS, after, [1])
    ch = out["changes"]
    assert (ch["solved"], ch["lost"], ch["better"], ch["worse"], ch["same"]) == (1, 1, 3, 1, 0)
    assert [r["prompt"] for r in ch["solved_prompts"]] == ["3+3="]
    # pass@1: before 0.4375, after (0 + 1 + 1/4 + 3/4) / 4 = 0.5
    assert out["pass_at_k_diff"]["1"]["mean"] == pytest.approx(0.0625)
    with pytest.raises(EvalError, match="prompt 0 differs"):
        compare_groups(GROUPS, list(reversed(after)), [1])
    assert [g.prompt for g in align_by_prompt(GROUPS, list(reversed(after)))] == [g.prompt for g in GROUPS]
    with pytest.raises(EvalError, match="same prompts"):
        align_by_prompt(GROUPS, after[:2])
