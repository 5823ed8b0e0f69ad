"""Tool declarations, the default parser, and every way a call can go wrong (never a crash)."""

from __future__ import annotations

import pytest

from rlvr.envs.tools import PARSERS, Call, Malformed, ToolBox, make_tool


def scale(x: float, times: int = 2, label: str = "") -> str:
    """Multiply a number.

    Args:
        x: the number.
        times (int): how many times.
    """
    return f"{label}{x * times}"


def explode(reason: str) -> str:
    """Always fails."""
    raise ZeroDivisionError(reason)


def test_schema_from_signature_and_docstring():
    f = make_tool(scale).schema["function"]
    assert f["name"] == "scale" and f["description"] == "Multiply a number."
    assert f["parameters"]["required"] == ["x"]
    assert f["parameters"]["properties"] == {
        "x": {"type": "number", "description": "the number."},
        "times": {"type": "integer", "description": "how many times."},
        "label": {"type": "string", "description": ""}}


def test_an_untyped_parameter_is_refused_at_declaration():
    def bad(x):
        """No type."""
    with pytest.raises(TypeError, match="parameter 'x' needs an annotation"):
        make_tool(bad)


def test_default_parser_finds_calls_in_order():
    text = ('think <tool_call>{"name": "a", "arguments": {"k": 1}}</tool_call> then '
            '<tool_call>{"name": "b"}</tool_call>')
    assert PARSERS["json_tags"](text) == [Call("a", {"k": 1}), Call("b", {})]
    assert PARSERS["json_tags"]("no call here") == []


@pytest.mark.parametrize("text, why", [
    ("<tool_call>{'name': 'scale'}</tool_call>", "not JSON"),
    ('<tool_call>{"name": "scale", "arguments": {"x": 1}}', "no closing </tool_call>"),
    ('<tool_call>["scale"]</tool_call>', 'expected {"name"'),
    ('<tool_call>{"name": "scale", "arguments": [1]}</tool_call>', 'expected {"name"'),
])
def test_malformed_calls_are_named(text, why):
    [found] = PARSERS["json_tags"](text)
    assert isinstance(found, Malformed) and found.why.startswith(why)
    results = ToolBox([scale]).run(text)
    assert results.observation.startswith("error: malformed tool call: " + why)
    assert results.metrics == {"tool/malformed": 1} and results.calls == 1


@pytest.mark.parametrize("arguments, message, key", [
    ('{"x": 1.5, "times": 3}', "scale: 4.5", "tool/ok"),
    ('{"x": 2}', "scale: 4", "tool/ok"),  # an int where a float is asked is fine
    ('{}', "error: bad arguments for scale: missing argument(s) ['x']", "tool/bad_args"),
    ('{"x": 1, "y": 2}', "error: bad arguments for scale: unexpected argument(s) ['y']", "tool/bad_args"),
    ('{"x": "one"}', "error: bad arguments for scale: argument 'x' must be number, got str", "tool/bad_args"),
    ('{"x": 1, "times": true}', "error: bad arguments for scale: argument 'times' must be integer, got bool",
     "tool/bad_args"),
])
def test_arguments_are_checked_against_the_signature(arguments, message, key):
    results = ToolBox([scale]).run(f'<tool_call>{{"name": "scale", "arguments": {arguments}}}</tool_call>')
    assert results.observation == message
    assert results.metrics == {key: 1, "tool/calls": 1}


def test_unknown_tool_and_raising_tool_become_observations():
    box = ToolBox([scale, explode])
    text = ('<tool_call>{"name": "nope", "arguments": {}}</tool_call>'
            '<tool_call>{"name": "explode", "arguments": {"reason": "boom"}}</tool_call>')
    results = box.run(text)
    assert results.observation.splitlines() == [
        "error: unknown tool 'nope'; tools: ['explode', 'scale']",
        "error: explode raised ZeroDivisionError: boom"]
    assert results.metrics == {"tool/unknown": 1, "tool/errors": 1, "tool/calls": 2}
    assert results.calls == 2


def test_long_output_is_cut_and_no_call_is_none():
    box = ToolBox([scale], max_output_chars=10)
    assert box.run('<tool_call>{"name": "scale", "arguments": {"x": 1, "label": "' + "z" * 50 + '"}}</tool_call>'
                   ).observation == "scale: zzz"
    assert box.run("the answer is 4") is None


def test_unknown_parser_is_refused():
    with pytest.raises(ValueError, match="unknown tool-call parser 'xml'"):
        ToolBox([scale], parser="xml")
