"""Evaluation of a policy: greedy held-out accuracy, and group-relative metrics over n samples
per prompt (pass@k, maj@k, best-of-n, disagreement mining, paired comparison; docs/evaluation.md).
The report and the end-to-end runner live in `rlvr.evaluate.report` / `rlvr.evaluate.evaluation`
(they import matplotlib, so they are not imported here). `greedy_accuracy` needs an engine
(torch) and is imported on first use, so that scoring a samples file never loads torch."""

from rlvr.evaluate.compare import compare_groups
from rlvr.evaluate.confidence import Estimate, bootstrap_mean, paired_difference
from rlvr.evaluate.disagreement import mine_disagreements
from rlvr.evaluate.groups import Graded, PromptGroup, grade_rollouts
from rlvr.evaluate.passk import pass_at_k
from rlvr.evaluate.summary import EvalError, summarize
from rlvr.evaluate.vote import maj_at_k, majority_score

__all__ = ["Estimate", "EvalError", "Graded", "PromptGroup", "bootstrap_mean", "compare_groups", "grade_rollouts",
           "greedy_accuracy", "maj_at_k", "majority_score", "mine_disagreements", "paired_difference", "pass_at_k",
           "summarize"]


def __getattr__(name: str):
    if name == "greedy_accuracy":  # lazy: rlvr.evaluate.accuracy imports the engines (torch)
        from rlvr.evaluate.accuracy import greedy_accuracy

        return greedy_accuracy
    raise AttributeError(f"module 'rlvr.evaluate' has no attribute {name!r}")
