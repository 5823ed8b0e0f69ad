"""[task], keyed on `task.kind`: one section per kind, each with only its own options and a
description of each (what `rlvr recipes show NAME --explain` prints)."""

from __future__ import annotations

from typing import Annotated, Any, Iterator, Literal, Optional, Union

from pydantic import Discriminator, Field, Tag, model_validator

from rlvr import names
from rlvr.config.section import Section, refuse
from rlvr.config.sections_env import GuessNumberTask, TextArenaTask
from rlvr.config.sections_repo import RepoTaskSection

# The most distinct problems `task.kind = "arithmetic"` may enumerate: it builds every one in
# memory (about 200 bytes each), so a huge operand range would exhaust memory, not fail.
MAX_ARITHMETIC_PROBLEMS = 1_000_000


class ArithmeticTask(Section):
    """Procedural `a op b =` problems, every one enumerated and split once by the seed."""

    kind: Literal["arithmetic"] = "arithmetic"
    seed: int = Field(0, ge=0, le=2**63 - 1, description="seed of the train/test split and of the problem order")
    test_size: int = Field(500, gt=0, le=1_000_000, description="held-out problems (below the number of problems)")
    low: int = Field(10, ge=-10**9, le=10**9, description="the smallest operand")
    high: int = Field(99, ge=-10**9, le=10**9, description="the largest operand")
    ops: str = Field("+", description="some of + - *, each at most once")

    @model_validator(mode="after")
    def _arithmetic_fits(self) -> "ArithmeticTask":
        refuse(arithmetic_problems(self))
        return self


class JsonlTask(Section):
    """`{"prompt", "answer"}` rows from local JSONL files."""

    kind: Literal["jsonl"] = "jsonl"
    train_path: Optional[str] = Field(None, description="the training rows (a run needs them; `rlvr eval` does not)")
    test_path: Optional[str] = Field(None, description="held-out rows for evaluation")


class HumanEvalTask(Section):
    """The 164 HumanEval problems (an evaluation set: no training split)."""

    kind: Literal["humaneval"] = "humaneval"


class ReasoningGymTask(Section):
    """Procedural problems from reasoning-gym generators (extra `gym`)."""

    kind: Literal["reasoning_gym"] = "reasoning_gym"
    seed: int = Field(0, ge=0, le=2**63 - 1, description="seed of every generator")
    test_size: int = Field(500, gt=0, le=1_000_000, description="held-out items per generator")
    gym_tasks: list[str] = Field(["basic_arithmetic"], description="reasoning-gym generator names")
    gym_size: int = Field(1000, gt=0, le=1_000_000, description="training items per generator")


class DatasetsTask(Section):
    """Local jsonl / json / parquet / arrow / csv files read with the `datasets` library
    (rlvr.tasks.files); the prompt column holds text or chat messages (model.chat_template)."""

    kind: Literal["datasets"] = "datasets"
    train_path: Optional[str] = Field(None, description="the training file")
    test_path: Optional[str] = Field(None, description="the held-out file")
    prompt_field: str = Field("prompt", min_length=1, description="the column of the prompt (text or messages)")
    answer_field: str = Field("answer", min_length=1, description="the column of the gold answer")
    extra_fields: list[str] = Field([], description="columns kept on each sample, passed to a reward "
                                                    "function that names them as parameters")
    test_fraction: Optional[float] = Field(None, gt=0, lt=1, description="without test_path: this share of "
                                                                          "train_path's rows is the test split")
    seed: int = Field(0, ge=0, le=2**63 - 1, description="seed of the test_fraction split")


# [task] is keyed on `kind`: each kind's section carries only its own options.
TASK_SECTIONS: dict[str, type[Section]] = names.TASK_KIND.bind({
    "arithmetic": ArithmeticTask, "jsonl": JsonlTask, "humaneval": HumanEvalTask, "reasoning_gym": ReasoningGymTask,
    "datasets": DatasetsTask, "guess_number": GuessNumberTask, "textarena": TextArenaTask, "repo": RepoTaskSection,
}, table="TASK_SECTIONS")
# What rlvr wrote for every [task] key before the section was keyed on kind (each run's
# config.toml held them all): a key of another kind with this value is such a leftover.
FLAT_TASK_DEFAULTS = {"seed": 0, "test_size": 500, "low": 10, "high": 99, "ops": "+",
                      "gym_tasks": ["basic_arithmetic"], "gym_size": 1000}


def _task_kind(value: Any) -> str:
    kind = value.get("kind", "arithmetic") if isinstance(value, dict) else getattr(value, "kind", "arithmetic")
    return kind if isinstance(kind, str) else repr(kind)  # `kind = []` is refused as an unknown kind


TaskSection = Annotated[Union[tuple(Annotated[cls, Tag(kind)] for kind, cls in TASK_SECTIONS.items())],
                        Discriminator(_task_kind)]


def task_section(**fields: Any) -> Section:
    """The [task] section of `fields["kind"]` (arithmetic when absent)."""
    return TASK_SECTIONS[fields.get("kind", "arithmetic")](**fields)


def task_without_leftovers(value: Any) -> Any:
    """A [task] table with the other kinds' keys that an older rlvr wrote at their defaults
    removed; any other key of another kind is refused naming the kind it belongs to."""
    if not isinstance(value, dict) or _task_kind(value) not in TASK_SECTIONS:
        return value
    kind = _task_kind(value)
    own, kept = TASK_SECTIONS[kind].model_fields, {}
    for key, v in value.items():
        if key in own:
            kept[key] = v
        elif key in FLAT_TASK_DEFAULTS and v == FLAT_TASK_DEFAULTS[key]:
            continue
        else:
            owners = [k for k, cls in TASK_SECTIONS.items() if key in cls.model_fields]
            if owners:
                raise ValueError(f"task.{key} is an option of task.kind = {' / '.join(map(repr, owners))}, "
                                 f"not of this task's kind {kind!r}")
            kept[key] = v  # an unknown key: the section's own error names it
    return kept


def arithmetic_problems(t: ArithmeticTask) -> Iterator[str]:
    """The operand range and ops of `task.kind = "arithmetic"` (low > high: see task_incoherences)."""
    if t.kind != "arithmetic":
        return
    if not t.ops or set(t.ops) - set("+-*") or len(set(t.ops)) != len(t.ops):
        yield f"task.ops = {t.ops!r}: use some of '+', '-', '*', each at most once"
        return
    if t.low > t.high:
        return
    count = (t.high - t.low + 1) ** 2 * len(t.ops)
    if count > MAX_ARITHMETIC_PROBLEMS:
        yield (f"task.low .. task.high ({t.low} .. {t.high}) with ops {t.ops!r} gives "
               f"{count} problems; at most {MAX_ARITHMETIC_PROBLEMS} are enumerated")
    elif t.test_size >= count:
        yield (f"task.test_size = {t.test_size} leaves no training problem: the operand range "
               f"gives {count} problems in all (test_size must be below that)")
