"""The patch comparator: how close a predicted patch is to the reference patch, file by file.

    similarity = mean over files f in (touched by either patch) of
                 SequenceMatcher(changed_lines_f(pred), changed_lines_f(ref)).ratio()

where `changed_lines_f` are the file's added and removed lines with their +/- sign, in order,
and a file touched by only one patch scores 0 (SWE-RL's reward is one sequence similarity over
the whole patch; NeMo Gym's swerl_gen scores per file: this is the per-file form). An empty or
unparsable prediction has similarity 0 and `parsed = False` (SWE-RL gives such a patch -1;
here the comparator is a shaping term in [0, 1] behind the tests' gate, so 0 is its floor).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from rlvr.envs.repo.patches import PatchError, _target_path, parse_patch
from rlvr.rewards.verdict import Verdict


@dataclass(frozen=True)
class PatchComparison:
    """Attributes: similarity (above), files touched by each patch, the files both touch,
    hunks of each, and whether the prediction parsed as a unified diff."""

    similarity: float
    files_pred: int
    files_ref: int
    files_common: int
    hunks_pred: int
    hunks_ref: int
    parsed: bool

    def metrics(self) -> dict[str, float]:
        return {"patch/similarity": self.similarity, "patch/files_touched": float(self.files_pred),
                "patch/files_in_reference": float(self.files_common), "patch/hunks": float(self.hunks_pred),
                "patch/parsed": float(self.parsed)}


def _changes(text: str) -> tuple[dict[str, list[str]], int]:
    """{path: [signed changed lines]}, hunk count; PatchError if `text` is not a diff."""
    files, hunks = {}, 0
    for patched in parse_patch(text):
        lines = []
        for hunk in patched:
            hunks += 1
            lines += [f"{line.line_type}{line.value.rstrip()}" for line in hunk if line.is_added or line.is_removed]
        files.setdefault(_target_path(patched), []).extend(lines)
    return files, hunks


def compare_patches(predicted: str, reference: str) -> PatchComparison:
    """Compare two unified diffs (see the module docstring); the reference must parse."""
    ref, ref_hunks = _changes(reference)
    try:
        pred, pred_hunks = _changes(predicted) if predicted.strip() else ({}, 0)
        parsed = bool(predicted.strip())
    except PatchError:
        pred, pred_hunks, parsed = {}, 0, False
    union = set(pred) | set(ref)
    scores = [difflib.SequenceMatcher(None, pred.get(f, []), ref.get(f, []), autojunk=False).ratio()
              if f in pred and f in ref else 0.0 for f in sorted(union)]
    similarity = sum(scores) / len(scores) if scores else 0.0
    return PatchComparison(similarity, len(pred), len(ref), len(set(pred) & set(ref)),
                           pred_hunks, ref_hunks, parsed)


def patch_similarity(response: str, gold: str) -> Verdict:
    """The comparator as a verifier: response = predicted diff, gold = reference diff."""
    found = compare_patches(response, gold)
    return Verdict(found.similarity, f"patch similarity {found.similarity:.2f} "
                   f"({found.files_common}/{found.files_ref} reference files touched)")
