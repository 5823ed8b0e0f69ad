"""[env] kind = "repo" and [task] kind = "repo": coding in a repository (docs/env-repo.md)."""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import Field

from rlvr.config.section import Section
from rlvr.config.episode_section import EpisodeSection


class RepoEnv(EpisodeSection):
    """The policy fixes a bug in its own copy of a repository with file, edit and run tools;
    at submit (or its last allowed turn / tool call) the hidden tests score the diff on a
    pristine copy (rlvr.envs.repo; docs/env-repo.md). Tasks: task.kind = "repo"."""

    kind: Literal["repo"] = "repo"
    tool_parser: Literal["json_tags"] = Field("json_tags", description="how tool calls are read from a turn")
    partial_credit: bool = Field(False, description="tests reward = share of FAIL_TO_PASS + PASS_TO_PASS passed "
                                                    "(false: 1 only when all pass)")
    similarity_weight: float = Field(0.1, ge=0, le=1, description="weight of the patch comparator, a shaping term gated "
                                                            "on resolved (0: tests only)")
    run_timeout_s: float = Field(10.0, gt=0, le=86400, description="wall-clock seconds of one run(command)")
    test_wall_s: float = Field(5.0, gt=0, le=86400, description="wall-clock seconds of one hidden test")
    max_output_chars: int = Field(2000, ge=1, le=10_000_000, description="a tool's result is cut to this many characters")
    sandbox_workers: int = Field(2, ge=1, le=256, description="sandbox runs at once (commands and hidden tests)")
    validate_tasks: bool = Field(True, description="refuse at load a task whose tests do not fail before / pass "
                                                   "after its reference patch (cached per row)")
    instructions: Optional[str] = Field(None, description="text put before each task (unset: how to call the tools)")
    observation: Literal["full", "located"] = Field(
        "full", description="full: the file list, the problem statement and all tools; located: for small models, "
                            "the file, line number and text of the line to fix, and the tools fix(old, new) "
                            "and submit() (rlvr.envs.repo.located; docs/env-repo.md)")


class RepoTaskSection(Section):
    """Repository tasks in SWE-bench's fields (rlvr.envs.repo.task): by default the shipped
    generated bug-fix tasks (train: 9 modules, test: 3 held-out modules)."""

    kind: Literal["repo"] = "repo"
    train_path: Optional[str] = Field(None, description="the training tasks (.jsonl or a datasets file); "
                                                        "unset: the shipped src/rlvr/envs/repo/data/train.jsonl")
    test_path: Optional[str] = Field(None, description="the held-out tasks; unset: the shipped test.jsonl")
    train_size: Optional[int] = Field(None, gt=0, le=1_000_000, description="use only the first N training tasks")
    test_size: Optional[int] = Field(None, gt=0, le=1_000_000, description="use only the first N held-out tasks")
