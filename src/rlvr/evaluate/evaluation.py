"""One evaluation end to end: sample n per prompt, grade, summarise, write the output folder.

Output folder:
    results.json          settings, metrics of the model (and of the compared model + diff)
    disagreements.jsonl   the model's mixed-verdict prompts, ranked, with their samples
    disagreements_compare.jsonl   the same for the compared model (compare mode only)
    report.html           self-contained report with embedded plots
    cot_judgements.jsonl  with a CoT judge: every sample with its reasoning judgement (cot_judge.py;
                          cot_judgements_compare.jsonl for the compared model)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from rlvr.evaluate.compare import compare_groups
from rlvr.evaluate.cot_pass import CotInput, compare_cot, summarize_cot
from rlvr.evaluate.disagreement import mine_disagreements, scattered_prompts, write_disagreements
from rlvr.evaluate.groups import PromptGroup, Verify, grade_rollouts
from rlvr.evaluate.report_page import write_report
from rlvr.evaluate.summary import summarize
from rlvr.rewards.concurrent import SERIAL, Concurrency

if TYPE_CHECKING:  # an engine means torch; scoring a samples file must not import it
    from rlvr.engines.base import Engine, SamplingParams
    from rlvr.types import Sample


@dataclass(frozen=True)
class EvalOutput:
    """Where an evaluation wrote its files, and the results.json dict."""

    folder: Path
    results: dict

    @property
    def results_file(self) -> Path:
        return self.folder / "results.json"

    @property
    def report(self) -> Path:
        return self.folder / "report.html"

    @property
    def disagreements(self) -> Path:
        return self.folder / "disagreements.jsonl"


def sample_groups(engine: Engine, samples: Sequence[Sample], n: int, params: SamplingParams,
                  verify: Verify, extract: tuple[str, ...], how: Concurrency = SERIAL) -> list[PromptGroup]:
    """Sample n completions of each prompt with `engine` and grade them (`how.workers` reward
    calls at once): P prompts → P groups."""
    rollouts = engine.generate([s.prompt for s in samples], n, params)
    return grade_rollouts(samples, rollouts, verify, extract, how)


def write_evaluation(out: Path, groups: Sequence[PromptGroup], ks: Sequence[int], settings: dict, *,
                     compare_with: Sequence[PromptGroup] | None = None, seed: int = 0,
                     cot: CotInput | None = None) -> EvalOutput:
    """Summarise `groups` (and the paired comparison with `compare_with`, and CoT-pass@k with
    `cot`) into the folder `out`."""
    out.mkdir(parents=True, exist_ok=True)
    results: dict = {"settings": dict(settings), "model": summarize(groups, ks, seed=seed)}
    disagreements = mine_disagreements(groups)
    write_disagreements(disagreements, out / "disagreements.jsonl")
    results["model"]["disagreements"] = len(disagreements)
    results["model"]["scattered_prompts"] = scattered_prompts(groups)
    if compare_with is not None:
        results["compare"] = {"model": summarize(compare_with, ks, seed=seed),
                              "diff": compare_groups(groups, compare_with, ks, seed=seed)}
        other = mine_disagreements(compare_with)
        write_disagreements(other, out / "disagreements_compare.jsonl")
        results["compare"]["model"]["disagreements"] = len(other)
        results["compare"]["model"]["scattered_prompts"] = scattered_prompts(compare_with)
    if cot is not None:
        add_cot(out, results, groups, compare_with, ks, cot, seed)
    else:  # an earlier CoT evaluation's judgements in this folder would not belong to these results
        for name in ("cot_judgements.jsonl", "cot_judgements_compare.jsonl"):
            (out / name).unlink(missing_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    write_report(out / "report.html", results, disagreements)
    return EvalOutput(out, results)


def add_cot(out: Path, results: dict, groups: Sequence[PromptGroup], compare_with: Sequence[PromptGroup] | None,
            ks: Sequence[int], cot: CotInput, seed: int) -> None:
    """results[...]["cot"] for each side, the paired CoT-pass@k difference, and the judgement files."""
    from rlvr.evaluate.cot_judge import write_judgements

    results["cot_settings"] = {"judge": cot.judge, "threshold": cot.threshold, "question": cot.question}
    results["model"]["cot"] = summarize_cot(groups, cot.judged, ks, seed=seed)
    write_judgements(out / "cot_judgements.jsonl", groups, cot.judged, cot.threshold)
    if compare_with is not None and cot.judged_compare is not None:
        results["compare"]["model"]["cot"] = summarize_cot(compare_with, cot.judged_compare, ks, seed=seed)
        results["compare"]["diff"]["cot_pass_at_k_diff"] = compare_cot(groups, cot.judged, compare_with,
                                                                       cot.judged_compare, ks, seed=seed)
        write_judgements(out / "cot_judgements_compare.jsonl", compare_with, cot.judged_compare, cot.threshold)
