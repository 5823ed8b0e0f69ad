"""env.kind = "repo": the policy fixes a bug in a repository with tools; hidden tests score it.

One `RepoEnv` plays one episode: `reset` takes the task named by the sample's answer (its
instance id), makes the episode's own copy of the base tree (`WorkTree`) and shows the problem
statement, the tools and the files. Each turn's tool calls (the existing tool-call parser,
`rlvr.envs.tools.ToolBox`) act on that copy; a malformed call, an unknown tool, bad arguments,
a path outside the repository, a missing file or a patch that does not apply becomes an
"error: ..." line of the observation and the episode goes on.

The episode ends, and is scored (`score.score_work`), when the policy calls `submit`, when a
turn makes no tool call ("no_tool_call": its work so far is submitted), or at the policy's last
allowed turn or tool call ("auto_submit", so an episode cut by max_turns / max_tool_calls is
still scored). Episodes that end on the token or wall-clock limit are the runner's: reward 0.
Nothing of an episode is on disk: the work tree is in memory, each `run` uses a scratch tmpfs
of the sandbox that ends with the run; a killed process leaves no copy behind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rlvr.envs.base import Env, StepResult
from rlvr.envs.repo.located import locate, located_observation
from rlvr.envs.repo.patches import diff_trees
from rlvr.envs.repo.score import RepoVerdict, score_work
from rlvr.envs.repo.tampering import tampering_flags
from rlvr.envs.repo.task import RepoTask
from rlvr.envs.repo.tools import WorkTree
from rlvr.envs.tools import ToolBox
from rlvr.rewards.sandbox import Sandbox
from rlvr.types import Sample

INSTRUCTIONS = ('Fix the bug in this repository. Call tools as <tool_call>{"name": "read_file", "arguments": '
                '{"path": "mod.py"}}</tool_call>. Tools: list_files(path), find_files(pattern), '
                'read_file(path, start, end), grep(pattern, path), edit(path, search, replace), '
                'apply_patch(patch), run(command), submit().\n')

MAX_VERDICTS = 4096  # cached verdicts of a factory (cleared when full)
TRANSIENT = {"timeout", "sandbox_error", "tests_not_run"}  # flags of a verdict that is not cached


@dataclass(frozen=True)
class RepoSettings:
    """Attributes: max_turns / max_tool_calls (the episode's limits: the last one auto-submits),
    partial (partial credit), similarity_weight (the comparator's shaping weight), run_timeout_s,
    max_output (characters of a tool's result), parser (tool-call parser), instructions."""

    max_turns: int = 8
    max_tool_calls: int = 16
    partial: bool = False
    similarity_weight: float = 0.1
    run_timeout_s: float = 10.0
    max_output: int = 2000
    parser: str = "json_tags"
    instructions: str = INSTRUCTIONS
    observation: str = "full"


def first_observation(task: RepoTask, instructions: str) -> str:
    files = "\n".join(sorted(task.base))
    return f"{instructions}Files:\n{files}\n\nIssue:\n{task.problem_statement}\n"


class RepoEnv(Env):
    """One repository episode (see the module docstring)."""

    def __init__(self, tasks: dict[str, RepoTask], sandbox: Sandbox, settings: RepoSettings = RepoSettings(),
                 verdicts: dict | None = None):
        self.tasks, self.sandbox, self.settings = tasks, sandbox, settings
        self.verdicts = verdicts  # (instance id, diff) -> RepoVerdict, shared by a factory's episodes
        self.task: RepoTask | None = None
        self.verdict: RepoVerdict | None = None
        self.tampering: tuple[str, ...] = ()
        self.turns = self.calls = 0

    def reset(self, sample: Sample, seed: int) -> str:
        if sample.answer not in self.tasks:
            raise KeyError(f"no repository task {sample.answer!r} (the sample's answer names its instance_id)")
        self.task = self.tasks[sample.answer]
        self.work = WorkTree(self.task.pristine(), self.sandbox, self.settings.run_timeout_s, self.settings.max_output)
        located = self.settings.observation == "located"
        self.toolbox = ToolBox(self.work.tools(located), parser=self.settings.parser, max_output_chars=self.settings.max_output)
        if located:
            where = locate(self.task)
            self.work.location = (where.path, where.line)
            return located_observation(self.task, self.settings.instructions)
        return first_observation(self.task, self.settings.instructions)

    def step(self, action: str) -> StepResult:
        self.turns += 1
        results = self.toolbox.run(action)
        if results is None:
            return self._finish("no_tool_call", {}, 0)
        self.calls += results.calls
        metrics = dict(results.metrics)
        if self.work.submitted:
            return self._finish("submitted", metrics, results.calls)
        if self.turns >= self.settings.max_turns or self.calls >= self.settings.max_tool_calls:
            return self._finish("auto_submit", metrics, results.calls)
        return StepResult(results.observation, metrics=metrics, tool_calls=results.calls)

    def _finish(self, reason: str, metrics: dict, calls: int) -> StepResult:
        self.verdict = self._score()
        self.tampering = tampering_flags(self.task.base, self.work.files, self.work.calls, self.verdict.flags)
        metrics = {**metrics, **self.verdict.metrics(self.task), f"repo/stop_{reason}": 1.0,
                   "repo/tampered": float(bool(self.tampering))}
        metrics.update({f"repo/tamper_{flag}": 1.0 for flag in self.tampering})
        return StepResult("", reward=self.verdict.reward, done=True, stop_reason=reason, metrics=metrics,
                          tool_calls=calls)


    def _score(self) -> RepoVerdict:
        """score_work, once per (task, diff): the hidden tests are deterministic, and a group of
        episodes often submits the same patch (a verdict whose tests timed out is not kept)."""
        key = (self.task.instance_id, diff_trees(self.task.base, self.work.files))
        if self.verdicts is not None and key in self.verdicts:
            return self.verdicts[key]
        verdict = score_work(self.task, self.work.files, self.sandbox, partial=self.settings.partial,
                             similarity_weight=self.settings.similarity_weight)
        if self.verdicts is not None and not set(verdict.flags) & TRANSIENT:
            if len(self.verdicts) >= MAX_VERDICTS:
                self.verdicts.clear()
            self.verdicts[key] = verdict
        return verdict

    def report(self) -> dict:
        """What an evaluation keeps beyond the trajectory: the diff, the per-test outcomes, the flags."""
        if self.verdict is None:
            return {}
        v = self.verdict
        tests = {t: v.run.outcomes.get(t, (None, ""))[0] for t in self.task.test_ids} if v.run else {}
        return {"repo": {"instance_id": self.task.instance_id, "diff": v.diff, "resolved": v.resolved,
                         "f2p": [v.f2p_passed, len(self.task.fail_to_pass)],
                         "p2p": [v.p2p_passed, len(self.task.pass_to_pass)], "tests": tests,
                         "similarity": v.comparison.similarity if v.comparison else None,
                         "flags": list(v.flags), "tampering": list(self.tampering), "reason": v.reason}}


def repo_env(tasks: list[RepoTask], sandbox: Sandbox, settings: RepoSettings = RepoSettings()) -> Callable[[], RepoEnv]:
    """A factory of `RepoEnv`s over `tasks` (one shared sandbox pool)."""
    by_id, verdicts = {t.instance_id: t for t in tasks}, {}
    return lambda: RepoEnv(by_id, sandbox, settings, verdicts)


def task_samples(tasks: list[RepoTask], source: str = "repo") -> list[Sample]:
    """The samples that name the tasks: prompt = the problem statement, answer = the instance id."""
    return [Sample(t.problem_statement, t.instance_id, f"{source}#{t.instance_id}") for t in tasks]
