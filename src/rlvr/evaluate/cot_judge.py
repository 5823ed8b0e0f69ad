"""Who judges the reasoning for CoT-pass@k (cot_pass.py), and the file the judgements live in.

A reasoning judge is an `Ask` (judge_bench.py): (prompt, reasoning, question, reference) ->
P(reasoning right). It is shown the sample's reasoning (`cot_monitor.reasoning_of`: the
<think> block when there is one, else the whole response), asked `COT_QUESTION` (or the
user's), with the gold answer as the reference. Judges (`--cot-judge`):

    function:package.module:function   any Python function, no model (never loads torch)
    model:DIR | http:URL               the GenRM judge of eval-judge: mean P(yes) over k samples
    reward:package.module:function     a reward fn(response, gold) -> float | Verdict (as eval-judge)
    rubric:RECIPE.toml                 that recipe's [reward] rubric (verifier = "rubric")
    rules:RECIPE.toml                  that recipe's reward.rules, asked of its [reward.judge]
    recipe:RECIPE.toml                 that recipe's [reward.judge] (eval-judge's --recipe)
    any|all|majority:SPEC + SPEC ...   several judges, their verdicts combined (judge_rules.py)
    samples[:RULE]                     the `cot_p` column of the --samples file (precomputed;
                                       with a RULE, a list of several judges' P's a row)

A judging pass resumes after a stop (cot_progress.py).

`cot_judgements.jsonl` (written by every CoT evaluation) is a samples file, one row a sample
in group order, with `cot_p` filled in and the verdicts in `meta`: re-read with
`rlvr eval --samples cot_judgements.jsonl --cot-judge samples` it gives the same results
without running the judge again, at any threshold.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Sequence

from rlvr.errors import DatasetError
from rlvr.evaluate.cot_pass import CotJudgement, Judged, judgement
from rlvr.evaluate.cot_progress import CotProgress
from rlvr.evaluate.groups import PromptGroup
from rlvr.evaluate.judge_bench import Ask, ask_checked
from rlvr.evaluate.judge_rules import RULES, combine
from rlvr.evaluate.samples_file import ALLOWED, REQUIRED
from rlvr.rewards.cot_monitor import reasoning_of
from rlvr.tasks.jsonl import json_object, read_lines

COT_QUESTION = ("Is the reasoning in the response correct: does each step follow from the task and "
                "the steps before it, and does it arrive at its final answer?")
SPECS = ("function:package.module:function, model:DIR, http:URL, reward:package.module:function, "
         "rubric:RECIPE.toml, rules:RECIPE.toml, recipe:RECIPE.toml, RULE:SPEC + SPEC (RULE: "
         + ", ".join(RULES) + ") or samples[:RULE]")


def judge_groups(groups: Sequence[PromptGroup], ask: Ask | Sequence[Ask], threshold: float,
                 question: str = COT_QUESTION, rule: str | None = None,
                 progress: CotProgress | None = None) -> list[tuple[CotJudgement, ...]]:
    """Ask the judge (or each judge, their verdicts combined by `rule`, judge_rules.py) about the
    reasoning of every sample → one judgement per sample. With `progress`, samples judged by an
    earlier, stopped pass are not asked again and each new one is saved as it is judged."""
    asks = list(ask) if isinstance(ask, (list, tuple)) else [ask]
    out = []
    for g in groups:
        row = []
        for i, m in enumerate(g.members):
            key = CotProgress.key(g.source, g.prompt, i, m.response)
            ps = progress.done.get(key) if progress is not None else None
            if ps is None:
                ps = [ask_checked(a, f"{g.source} (sample {i + 1})", g.prompt, reasoning_of(m.response), question,
                                  g.gold) for a in asks]
                if progress is not None:
                    progress.record(key, ps)
            row.append(combine(ps, threshold, rule) if rule else judgement(ps[0], threshold))
        out.append(tuple(row))
    return out


def _cot_p(value: object, where: str) -> float:
    if isinstance(value, bool):  # a hand label
        return float(value)
    if not isinstance(value, (int, float)) or not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise DatasetError(f"{where}: field 'cot_p' must be a probability in [0, 1] (or true/false), got {value!r}")
    return float(value)


def read_precomputed(path: Path, threshold: float, rule: str | None = None) -> dict[str, list[CotJudgement]]:
    """The `cot_p` of every row of a samples file, by prompt in file order (as load_samples
    groups them); a DatasetError naming the line of a row without one. With a `rule`, each
    `cot_p` is a list of several judges' P's, combined by it (judge_rules.py)."""
    out: dict[str, list[CotJudgement]] = {}
    for line, where in read_lines(path, "samples"):
        row = json_object(line, where, REQUIRED, ALLOWED)  # load_samples checked the rest
        if "cot_p" not in row:
            raise DatasetError(f"{where}: no field 'cot_p' for --cot-judge samples (give every row one, "
                               f"or judge with --cot-judge {SPECS.rsplit(' or ', 1)[0]})")
        if rule is None:
            out.setdefault(row["prompt"], []).append(judgement(_cot_p(row["cot_p"], where), threshold))
            continue
        ps = row["cot_p"]
        if not isinstance(ps, list) or not ps:
            raise DatasetError(f"{where}: field 'cot_p' must be a list of the judges' P's for --cot-judge "
                               f"samples:{rule}, got {ps!r}")
        out.setdefault(row["prompt"], []).append(combine([_cot_p(p, where) for p in ps], threshold, rule))
    return out


def precomputed_for(groups: Sequence[PromptGroup], table: dict[str, list[CotJudgement]]) -> Judged:
    return [tuple(table[g.prompt]) for g in groups]


def judgement_rows(groups: Sequence[PromptGroup], judged: Judged, threshold: float) -> list[dict]:
    """One samples-file row a sample, with cot_p and the verdicts (in meta)."""
    rows = []
    for g, js in zip(groups, judged):
        for i, (m, j) in enumerate(zip(g.members, js)):
            row = {"prompt": g.prompt, "response": m.response, "gold": g.gold, "cot_p": j.p,
                   "meta": {"source": g.source, "sample": i, "score": m.score, "answer": m.answer,
                            "answer_correct": m.score >= 1.0, "cot_correct": j.right, "threshold": threshold,
                            "counts_for_cot_pass": m.score >= 1.0 and j.right}}
            if m.mean_logprob is not None and math.isfinite(m.mean_logprob):
                row["logprob"] = m.mean_logprob
            rows.append(row)
    return rows


def write_judgements(path: Path, groups: Sequence[PromptGroup], judged: Judged, threshold: float) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in judgement_rows(groups, judged, threshold)),
                    encoding="utf-8")
