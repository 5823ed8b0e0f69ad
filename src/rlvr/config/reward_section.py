"""[reward]: what scores a completion. Options common to every verifier stay at the top; each
program verifier's own options are in its table ([reward.math], [reward.code], ...), present
exactly when that verifier is chosen: `reward.verifier`, or a rubric criterion's `verifier`
(config/kind_tables.py). The generative judge's options are [reward.judge].

    [reward]
    verifier = "math"
    [reward.math]
    timeout_s = 5.0

The section's own rules (template against verifier, one scorer per criterion) run in its
validators, so that `rlvr verify`, which reads a [reward] section alone, gets them too.
"""

from __future__ import annotations

from typing import Any, Iterator, Literal, Optional

from pydantic import Field, ValidationInfo, field_validator, model_validator

from rlvr import names
from rlvr.config.kind_tables import with_kind_tables
from rlvr.config.section import Section, refuse


class MathOptions(Section):
    """reward.verifier = "math" (rewards/math_verifier.py)."""

    extract: list[str] = Field(["boxed", "answer_tag", "answer_phrase", "whole", "math_span", "last_number"],
                               description="the answer extractors, tried in this order")
    timeout_s: float = Field(2.0, gt=0, le=3600, description="wall-clock limit of one math-verify check")
    rounded_golds: bool = Field(False, description="decimal golds are rounded values (TheoremQA's floats), so "
                                                   "'2.2361' is right for '2.236'; off, only a gold written "
                                                   "'\\approx 2.236' (or of 10+ digits) is read as rounded")


class CodeOptions(Section):
    """reward.verifier = "code" (rewards/code_verifier.py)."""

    timeout_s: float = Field(10.0, gt=0, le=86400, description="wall-clock budget of one answer's tests together")
    test_timeout_s: float = Field(5.0, gt=0, le=86400, description="wall-clock limit of one test (its own process)")
    workers: int = Field(2, ge=1, le=1024, description="sandbox runs in parallel")


class FormatOptions(Section):
    """reward.verifier = "format": checks reward.template."""

    strict: bool = Field(False, description="the template exactly, nothing after the last box but closing punctuation "
                                            "(rewards/format_verifier.py)")


class ExactOptions(Section):
    """reward.verifier = "exact"."""

    case_sensitive: bool = Field(False, description="compare letters as written")


class InstructionsOptions(Section):
    """reward.verifier = "instructions"."""

    strict: bool = Field(False, description="all constraints or nothing")


REWARD_TABLES: dict[str, type[Section]] = names.PROGRAM_VERIFIER.bind({
    "math": MathOptions, "code": CodeOptions, "format": FormatOptions, "exact": ExactOptions,
    "instructions": InstructionsOptions,
}, table="REWARD_TABLES")


class JudgeSection(Section):
    """The generative judge (GenRM) behind `verifier = "judge"`, rubric criteria and rules."""

    backend: Literal["transformers", "http"] = "transformers"
    model: Optional[str] = None  # transformers: a model folder; http: the served model's name
    url: Optional[str] = None  # http: an OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1
    samples: int = Field(1, ge=1, le=1024)  # k judge samples; the reward is their mean P(yes)
    max_new_tokens: int = Field(256, ge=0, le=1048576)  # the judge's reasoning before its yes/no
    temperature: float = Field(1.0, ge=0, le=10)
    timeout_s: float = Field(60.0, gt=0, le=86400)  # http: per request


class RubricCriterion(Section):
    """One named, weighted criterion: scored by a program (`function` or `verifier`) or by the
    judge answering `question`. Exactly one of the three is set."""

    name: str
    weight: float = Field(1.0, gt=0, le=1e6)
    function: Optional[str] = None  # "package.module:function"
    verifier: Optional[names.PROGRAM_VERIFIER.literal()] = None
    question: Optional[str] = None

    @model_validator(mode="after")
    def _one_scorer(self) -> "RubricCriterion":
        refuse(criterion_problems(self))
        return self


class RewardSection(Section):
    """[reward]. The defaults equal the verifiers' own (tests/orchestrate/test_scoring.py checks
    it), so training, `rlvr verify` and `rlvr audit` (whose --option keys are these) agree."""

    verifier: names.VERIFIER.literal() = "math"
    # The answer template the prompt asks for (rewards/templates.py). "think_answer" / "boxed":
    # math and exact score only the committed answer (none committed: 0, no fall-through to
    # another extractor), and verifier = "format" checks this template. "none": each
    # verifier's own extraction (`math.extract`), for prompts that ask for no template.
    template: names.TEMPLATE.literal() = "none"
    on_error: Literal["fail", "zero"] = "fail"
    # A step's reward calls at once (rewards/concurrent.py): 1 = one after the other; "thread"
    # for functions that wait on I/O, "process" for CPU-bound Python (picklable functions).
    score_workers: int = Field(1, ge=1, le=1024)
    score_pool: Literal["thread", "process"] = "thread"
    call_timeout_s: float = Field(0.0, ge=0, le=86400)  # one reward call's wall-clock limit; 0 = none
    function: Optional[str] = None  # "package.module:function", replaces the verifier
    judge: JudgeSection = JudgeSection()
    rubric: list[RubricCriterion] = []  # verifier = "rubric"
    rules: list[str] = []  # verifier = "rules": natural-language rules, each graded by the judge
    # Each program verifier's own options (REWARD_TABLES), set exactly when it is chosen.
    math: Optional[MathOptions] = None
    code: Optional[CodeOptions] = None
    format: Optional[FormatOptions] = None
    exact: Optional[ExactOptions] = None
    instructions: Optional[InstructionsOptions] = None
    # Removed keys, kept only to say what replaced them (pointing at the key's line).
    timeout_s: None = Field(None, exclude=True)
    format_template: None = Field(None, exclude=True)

    @field_validator("timeout_s", "format_template", mode="before")
    @classmethod
    def _removed(cls, value: object, info: ValidationInfo) -> None:
        raise ValueError(REMOVED_REWARD_KEYS[info.field_name])

    @model_validator(mode="before")
    @classmethod
    def _kind_tables(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        chosen = chosen_verifiers(data.get("verifier", "math"), data.get("rubric"))
        reader = {v: f"reward.verifier = {v!r} or a rubric criterion's verifier is {v!r} (not {sorted(chosen)})"
                  for v in REWARD_TABLES}
        return with_kind_tables("reward", data, REWARD_TABLES, chosen, reader)

    @model_validator(mode="after")
    def _template_fits_verifier(self) -> "RewardSection":
        refuse(reward_section_problems(self))
        return self

    def options(self, verifier: str) -> Section:
        """The options of program verifier `verifier`: its table, or its defaults where this
        section does not choose it (`rlvr eval --task humaneval` scores code under a math run)."""
        return getattr(self, verifier) or REWARD_TABLES[verifier]()


def chosen_verifiers(verifier: Any, rubric: Any) -> set[str]:
    """The program verifiers a [reward] table runs: its verifier and its criteria's."""
    criteria = rubric if isinstance(rubric, list) else []
    found = [c.get("verifier") if isinstance(c, dict) else getattr(c, "verifier", None) for c in criteria]
    return {v for v in [verifier, *found] if isinstance(v, str)}


REMOVED_REWARD_KEYS = {
    "timeout_s": "removed: a maths check and a code run have separate limits now; set "
                 "reward.math.timeout_s and/or reward.code.timeout_s",
    "format_template": "renamed reward.template (it also makes math and exact read only the "
                       "template's answer)",
}


def criterion_problems(c: RubricCriterion) -> Iterator[str]:
    set_ = [k for k in ("function", "verifier", "question") if getattr(c, k) is not None]
    if len(set_) != 1:
        yield f"criterion {c.name!r} needs exactly one of function, verifier, question (has {set_ or 'none'})"


def reward_section_problems(r: RewardSection) -> Iterator[str]:
    formats = r.verifier == "format" or any(c.verifier == "format" for c in r.rubric)
    if formats and r.template == "none":
        yield "the format verifier checks the answer template: set reward.template = 'think_answer' or 'boxed'"
    if r.template != "none" and (r.function or r.verifier not in names.TEMPLATED_VERIFIER.names):
        scorer = "reward.function" if r.function else f"verifier {r.verifier!r}"
        yield (f"reward.template = {r.template!r} applies to the verifiers "
               f"{', '.join(names.TEMPLATED_VERIFIER.names)}, not {scorer} (set template = 'none'; "
               f"a function can call rlvr.rewards.templates.committed_answer)")
