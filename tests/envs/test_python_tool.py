"""The Python-tool environment: `python(code)` runs in the reward stack's sandbox."""

from __future__ import annotations

import re

import pytest

from rlvr.engines.base import SamplingParams
from rlvr.envs import EpisodeLimits, EpisodeRunner, PlainRenderer
from rlvr.envs.tool_env import python_tool_env
from rlvr.rewards.exact_verifier import ExactVerifier
from rlvr.rewards.sandbox import Limits, Sandbox, bwrap_unavailable
from rlvr.types import Sample

WHY_NOT = bwrap_unavailable()
pytestmark = [pytest.mark.sandbox,
              pytest.mark.skipif(WHY_NOT is not None, reason=f"bubblewrap cannot sandbox here: {WHY_NOT}")]


def call(code: str) -> str:
    return '<tool_call>{"name": "python", "arguments": {"code": "' + code + '"}}</tool_call>'


def policy(text: str) -> str:
    """Multiply with the tool, then answer what it printed; broken code on the second task."""
    if "<obs>python:" not in text:
        a, b = re.findall(r"\d+", text.split("What is")[-1])[:2]
        return call(f"print({a} * {b})") if "1 / 0" not in text else call("print(1 / 0)")
    return "Answer: " + text.rsplit("<obs>python: ", 1)[1].split("</obs>")[0].strip()


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(Limits(wall_s=5, cpu_s=5), workers=2) as pool:
        assert pool.isolation.kind == "bwrap"  # the skip above promised it
        yield pool


def test_the_policy_uses_the_tool_and_is_scored(scripted, char_tok, sandbox):
    engine = scripted(policy)
    samples = [Sample("What is 123456789 * 987654321?", str(123456789 * 987654321)),
               Sample("What is 6 * 7? Try 1 / 0 first.", "42")]
    with EpisodeRunner(engine, PlainRenderer(char_tok), SamplingParams(max_new_tokens=64),
                       EpisodeLimits(max_turns=3, max_total_tokens=4000, wall_s=30)) as runner:
        solved, broken = runner.run(python_tool_env(sandbox, ExactVerifier()), samples, [0, 1])
    assert (solved.stop_reason, solved.reward, solved.tool_calls) == ("answered", 1.0, 1)
    assert solved.trajectory.turns[0].observation == f"python: {123456789 * 987654321}\n"
    # The program's error is the observation (with its exit code), and the episode goes on.
    error = broken.trajectory.turns[0].observation
    assert "ZeroDivisionError" in error and error.endswith("[exit code 1]")
    assert broken.stop_reason == "answered" and broken.reward == 0.0
    assert broken.metrics["tool/ok"] == 1  # the tool returned; the program failed inside it
