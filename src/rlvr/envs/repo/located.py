"""The located tier of repository episodes, for small models (env.observation = "located").

A model with a few hundred positions cannot read a whole repository. Here the first
observation is the problem located: the file, the line number and the text of the line that
the reference patch replaces (the fix itself is not shown), and the tools are

    fix(old, new)   in the located line, replace the one token `old` by `new`
    submit()

(the call names no path or line: the first, 200k-parameter model did not learn to copy them to
files it never saw in training within CPU minutes; the first version did, and wrote training
file names on held-out tasks). So one short call can fix a one-token bug (a comparison or operator swap, an off-by-one).
Everything after the call is the full environment's: the same work tree, the same diff on a
pristine copy, the same hidden tests and gated comparator. Only tasks whose reference patch
replaces exactly one line can be located; others are refused with their instance id.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rlvr.envs.repo.patches import parse_patch
from rlvr.envs.repo.task import RepoTask

INSTRUCTIONS = "Tools: fix(old, new), submit().\n"


class NotLocatable(ValueError):
    """A task whose reference patch is not one replaced line."""


@dataclass(frozen=True)
class Location:
    """The line the reference patch replaces: path, 1-based line, its base text and the fixed text."""

    path: str
    line: int
    text: str
    fixed: str


def locate(task: RepoTask) -> Location:
    """Where `task`'s reference patch changes the base: exactly one removed and one added line."""
    files = [f for f in parse_patch(task.patch)] if task.patch.strip() else []
    changes = [(f.path, line) for f in files for hunk in f for line in hunk if line.is_added or line.is_removed]
    removed = [(p, l) for p, l in changes if l.is_removed]
    added = [(p, l) for p, l in changes if l.is_added]
    if len(removed) != 1 or len(added) != 1:
        raise NotLocatable(f"task {task.instance_id}: env.observation = 'located' needs a reference patch that "
                           f"replaces one line (it removes {len(removed)} and adds {len(added)})")
    (path, old), (_, new) = removed[0], added[0]
    return Location(path.removeprefix("a/"), old.source_line_no, old.value.rstrip("\n"), new.value.rstrip("\n"))


def located_observation(task: RepoTask, instructions: str = INSTRUCTIONS) -> str:
    """The first observation: the tools, then `PATH line N: TEXT` (the line without its indent)."""
    where = locate(task)
    return f"{instructions}{where.path} line {where.line}: {where.text.strip()}\n"


_OPERATOR = set("<>=!+-*/%&|^~")


def _occurrences(text: str, token: str) -> list[int]:
    """Start offsets of `token` in `text` as a whole token: not glued to a neighbour of its kind
    (a word to letters, digits, `_` or `.`; an operator to operator characters)."""
    if not token:
        return []
    word = token[0].isalnum() or token[0] == "_"
    glued = (lambda c: c.isalnum() or c in "_.") if word else (lambda c: c in _OPERATOR)
    starts = [m.start() for m in re.finditer(re.escape(token), text)]
    return [s for s in starts if not (s > 0 and glued(text[s - 1]))
            and not (s + len(token) < len(text) and glued(text[s + len(token)]))]


def fix_line(text: str, line: int, old: str, new: str, path: str) -> str:
    """`text` with the one whole-token `old` in line `line` (1-based) made `new`; ValueError otherwise."""
    lines = text.splitlines(keepends=True)
    if not 1 <= line <= len(lines):
        raise ValueError(f"{path} has no line {line} (it has {len(lines)})")
    found = _occurrences(lines[line - 1], old)
    if len(found) != 1:
        raise ValueError(f"{old!r} occurs {len(found)} times as a token in {path} line {line} (fix needs exactly one)")
    s = found[0]
    lines[line - 1] = lines[line - 1][:s] + new + lines[line - 1][s + len(old):]
    return "".join(lines)


_TOKEN = re.compile(r"[A-Za-z0-9_.]+|[<>=!+\-*/%&|^~]+|\S")


def token_fix(where: Location) -> tuple[str, str] | None:
    """(old, new) when the reference fix replaces one token, unique in its line; else None."""
    a, b = _TOKEN.findall(where.text), _TOKEN.findall(where.fixed)
    if len(a) != len(b):
        return None
    changed = [(x, y) for x, y in zip(a, b) if x != y]
    if len(changed) != 1 or len(_occurrences(where.text, changed[0][0])) != 1:
        return None
    return changed[0]
