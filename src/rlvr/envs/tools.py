"""Tool calls: typed Python functions as tools, parsers that find calls in the model's text.

A tool is a plain function with annotated parameters (str, int, float, bool) and a docstring:
its first paragraph describes the tool, and an `Args:` section describes each parameter.
`make_tool(fn)` reads both into a JSON schema (the form chat templates take in `tools=`).

The default parser, "json_tags", finds every

    <tool_call>{"name": "python", "arguments": {"code": "print(2 + 3)"}}</tool_call>

in a turn. `PARSERS` maps a parser's name to a function text → list of `Call | Malformed`.

Nothing a model writes can crash a `ToolBox`: a malformed call, an unknown tool, bad arguments
or a tool that raises each becomes a line of the observation saying so, and is counted:

    tool/calls       calls that parsed (well-formed JSON with a name and arguments object)
    tool/malformed   calls that did not parse (bad JSON, no closing tag, wrong shape)
    tool/unknown     calls naming no declared tool
    tool/bad_args    missing, unexpected or wrongly typed arguments
    tool/errors      tools that raised
    tool/ok          calls that returned
"""

from __future__ import annotations

import inspect
import json
import re
import typing
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from rlvr import names

_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}


class ToolArgumentError(ValueError):
    """The arguments of a call do not fit the tool's signature."""


@dataclass(frozen=True)
class Tool:
    """A declared tool: the function and the JSON schema read from its signature."""

    name: str
    fn: Callable
    schema: dict
    types: dict[str, type] = field(default_factory=dict)
    required: tuple[str, ...] = ()

    def check(self, arguments: dict) -> dict:
        """The arguments, checked against the signature (int accepted where float is asked)."""
        missing = [k for k in self.required if k not in arguments]
        extra = [k for k in arguments if k not in self.types]
        if missing or extra:
            raise ToolArgumentError(f"missing {missing}, unexpected {extra}" if missing and extra else
                                    f"missing argument(s) {missing}" if missing else f"unexpected argument(s) {extra}")
        for key, value in arguments.items():
            want = self.types[key]
            ok = isinstance(value, want) and not (want is not bool and isinstance(value, bool))
            if want is float and isinstance(value, int) and not isinstance(value, bool):
                ok = True
            if not ok:
                raise ToolArgumentError(f"argument {key!r} must be {_JSON_TYPES[want]}, got {type(value).__name__}")
        return arguments


def make_tool(fn: Callable, name: str | None = None) -> Tool:
    """A `Tool` from a typed function; raises TypeError naming a parameter it cannot describe."""
    doc = inspect.getdoc(fn) or ""
    summary, arg_docs = _parse_doc(doc)
    props, types, required = {}, {}, []
    hints = typing.get_type_hints(fn)  # resolves string annotations (`from __future__ import annotations`)
    for pname, p in inspect.signature(fn).parameters.items():
        kind = hints.get(pname)
        if kind not in _JSON_TYPES:
            raise TypeError(f"tool {fn.__name__}: parameter {pname!r} needs an annotation among "
                            f"str, int, float, bool (got {kind!r})")
        types[pname] = kind
        props[pname] = {"type": _JSON_TYPES[kind], "description": arg_docs.get(pname, "")}
        if p.default is inspect.Parameter.empty:
            required.append(pname)
    tool_name = name or fn.__name__
    schema = {"type": "function", "function": {"name": tool_name, "description": summary, "parameters": {
        "type": "object", "properties": props, "required": required}}}
    return Tool(tool_name, fn, schema, types, tuple(required))


def _parse_doc(doc: str) -> tuple[str, dict[str, str]]:
    """(first paragraph, {parameter: description}) from a Google-style docstring."""
    summary = doc.split("\n\n")[0].replace("\n", " ").strip()
    args, inside = {}, False
    for line in doc.splitlines():
        if line.strip() in ("Args:", "Arguments:"):
            inside = True
        elif inside and (m := re.match(r"\s+(\w+)(?:\s*\([^)]*\))?:\s*(.*)", line)):
            args[m.group(1)] = m.group(2).strip()
        elif inside and line.strip() and not line.startswith(" "):
            inside = False
    return summary, args


@dataclass(frozen=True)
class Call:
    name: str
    arguments: dict


@dataclass(frozen=True)
class Malformed:
    text: str  # what was found
    why: str


_TAG = re.compile(r"<tool_call>(.*?)(</tool_call>|$)", re.DOTALL)


def parse_json_tags(text: str) -> list[Call | Malformed]:
    """Every `<tool_call>JSON</tool_call>`, JSON = {"name": str, "arguments": object}."""
    found: list[Call | Malformed] = []
    for m in _TAG.finditer(text):
        body = m.group(1).strip()
        if not m.group(2):
            found.append(Malformed(body, "no closing </tool_call>"))
            continue
        try:
            obj = json.loads(body)
        except json.JSONDecodeError as e:
            found.append(Malformed(body, f"not JSON ({e.msg} at char {e.pos})"))
            continue
        if not (isinstance(obj, dict) and isinstance(obj.get("name"), str)
                and isinstance(obj.get("arguments", {}), dict)):
            found.append(Malformed(body, 'expected {"name": "...", "arguments": {...}}'))
            continue
        found.append(Call(obj["name"], obj.get("arguments", {})))
    return found


PARSERS: dict[str, Callable[[str], list[Call | Malformed]]] = names.TOOL_PARSER.bind(
    {"json_tags": parse_json_tags}, table="PARSERS")


@dataclass(frozen=True)
class ToolResults:
    """What one turn's calls gave: the observation text, the count and the metrics."""

    observation: str
    calls: int  # parsed or not: every attempt counts against the episode's tool-call limit
    metrics: Counter


class ToolBox:
    """The tools of an environment and the parser of their calls."""

    def __init__(self, tools: list[Callable | Tool], parser: str = "json_tags", max_output_chars: int = 2000):
        if parser not in PARSERS:
            raise ValueError(f"unknown tool-call parser {parser!r}; known: {sorted(PARSERS)}")
        made = [t if isinstance(t, Tool) else make_tool(t) for t in tools]
        self.tools = {t.name: t for t in made}
        self.parse, self.max_output_chars = PARSERS[parser], max_output_chars

    @property
    def schemas(self) -> list[dict]:
        return [t.schema for t in self.tools.values()]

    def run(self, text: str) -> ToolResults | None:
        """Run every call in `text`, in order; None when the text makes no call."""
        found = self.parse(text)
        if not found:
            return None
        lines, metrics = [], Counter()
        for item in found:
            line, key = self._one(item)
            lines.append(line[: self.max_output_chars])
            metrics[key] += 1
            if isinstance(item, Call):
                metrics["tool/calls"] += 1
        return ToolResults("\n".join(lines), len(found), metrics)

    def _one(self, item: Call | Malformed) -> tuple[str, str]:
        """(the observation line, the metric it counts in) for one call."""
        if isinstance(item, Malformed):
            return f"error: malformed tool call: {item.why}", "tool/malformed"
        tool = self.tools.get(item.name)
        if tool is None:
            return f"error: unknown tool {item.name!r}; tools: {sorted(self.tools)}", "tool/unknown"
        try:
            arguments = tool.check(item.arguments)
        except ToolArgumentError as e:
            return f"error: bad arguments for {item.name}: {e}", "tool/bad_args"
        try:
            return f"{item.name}: {tool.fn(**arguments)}", "tool/ok"
        except Exception as e:  # the tool's own failure becomes the observation (counted)
            return f"error: {item.name} raised {type(e).__name__}: {e}", "tool/errors"
