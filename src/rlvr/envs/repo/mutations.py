"""Bug injection: every place in a module where one small edit makes a plausible bug.

Kinds (SWE-smith's procedural modifications, re-derived here):

    compare       a comparison swapped: <  <=, >  >=, == !=
    operator      an arithmetic operator swapped: + -, * +, // %, % //
    off_by_one    an integer constant n in an expression made n + 1 or n - 1
    inverted      an `if` condition negated: `if not (cond):`
    deleted_line  a one-line assignment or call statement removed
    wrong_default a default argument changed (int n -> n + 1, bool -> not, str -> "")

Each `Mutation` is a text edit of one line (the rest of the file is untouched, so the reference
patch, its inverse, is one small hunk). `mutations(source)` lists them in source order;
which of them become tasks is the generator's (seeded) choice.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

_COMPARE = {ast.Lt: ("<", "<="), ast.LtE: ("<=", "<"), ast.Gt: (">", ">="), ast.GtE: (">=", ">"),
            ast.Eq: ("==", "!="), ast.NotEq: ("!=", "==")}
_BINOP = {ast.Add: ("+", "-"), ast.Sub: ("-", "+"), ast.Mult: ("*", "+"), ast.FloorDiv: ("//", "%"),
          ast.Mod: ("%", "//")}
KINDS = ("compare", "operator", "off_by_one", "inverted", "deleted_line", "wrong_default")


@dataclass(frozen=True)
class Mutation:
    """Replace line `line` (1-based) of the source by `new_line` ("" with `delete`: remove it).

    Attributes: kind (one of KINDS), line, old_line, new_line, delete, function (the enclosing
    function's name, "" at module level).
    """

    kind: str
    line: int
    old_line: str
    new_line: str
    function: str
    delete: bool = False

    def apply(self, source: str) -> str:
        lines = source.splitlines(keepends=True)
        assert lines[self.line - 1] == self.old_line, "the mutation was made for another source"
        lines[self.line - 1: self.line] = [] if self.delete else [self.new_line]
        return "".join(lines)


def _functions(tree: ast.Module) -> dict[int, str]:
    """line -> the name of the outermost function that holds it."""
    owner = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            for line in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                owner[line] = node.name
    return owner


def _swap(line: str, start: int, end: int, old: str, new: str) -> str | None:
    """`line` with the one `old` operator in line[start:end] made `new` (None if not exactly one)."""
    segment = line[start:end]
    padded = f" {old} "
    if segment.count(padded) != 1:
        return None
    return line[:start] + segment.replace(padded, f" {new} ") + line[end:]


def _edits(tree: ast.Module, lines: list[str]):
    """(kind, line, new text of that line or None for a deletion) for every site."""
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.FunctionDef)) and n.body and isinstance(n.body[0], ast.Expr)
                  and isinstance(n.body[0].value, ast.Constant)}
    for node in ast.walk(tree):
        line = getattr(node, "lineno", None)
        if line is None or line != getattr(node, "end_lineno", line):
            if isinstance(node, ast.FunctionDef):
                yield from _defaults(node, lines)
            continue
        text = lines[line - 1]
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
            old, new = _COMPARE[type(node.ops[0])]
            yield "compare", line, _swap(text, node.left.end_col_offset, node.comparators[0].col_offset, old, new)
        elif isinstance(node, ast.BinOp) and type(node.op) in _BINOP:
            old, new = _BINOP[type(node.op)]
            yield "operator", line, _swap(text, node.left.end_col_offset, node.right.col_offset, old, new)
        elif isinstance(node, ast.Constant) and type(node.value) is int and id(node) not in docstrings:
            for value in (node.value + 1, node.value - 1):
                if value >= 0:
                    yield "off_by_one", line, text[:node.col_offset] + str(value) + text[node.end_col_offset:]
        if isinstance(node, (ast.Assign, ast.AugAssign)) or (
                isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
            yield "deleted_line", line, None
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and node.test.lineno == node.test.end_lineno:
            text = lines[node.test.lineno - 1]
            cond = text[node.test.col_offset:node.test.end_col_offset]
            yield "inverted", node.test.lineno, text[:node.test.col_offset] + f"not ({cond})" + text[node.test.end_col_offset:]


def _defaults(node: ast.FunctionDef, lines: list[str]):
    for default in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
        if not isinstance(default, ast.Constant) or default.lineno != default.end_lineno:
            continue
        value = default.value
        new = (str(not value) if type(value) is bool else str(value + 1) if type(value) is int
               else '""' if isinstance(value, str) and value else None)
        if new is not None:
            text = lines[default.lineno - 1]
            yield "wrong_default", default.lineno, text[:default.col_offset] + new + text[default.end_col_offset:]


def _deletable(tree: ast.Module, line: int) -> bool:
    """A deleted line must leave a body that still has a statement."""
    for node in ast.walk(tree):
        for field in ("body", "orelse"):
            body = getattr(node, field, None)
            if isinstance(body, list) and any(getattr(s, "lineno", 0) == line for s in body):
                return len(body) > 1
    return False


def mutations(source: str) -> list[Mutation]:
    """Every site of every kind in `source`, in source order; each one still parses."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    owner, found, seen = _functions(tree), [], set()
    for kind, line, new in _edits(tree, lines):
        if owner.get(line, "") == "" and kind != "wrong_default":
            continue  # module-level tables: a changed constant there is no function's bug
        if new is None and not (kind == "deleted_line" and _deletable(tree, line)):
            continue
        mutation = Mutation(kind, line, lines[line - 1], new or "", owner.get(line, ""), delete=new is None)
        key = (line, mutation.new_line, mutation.delete)
        if key in seen or mutation.new_line == mutation.old_line:
            continue
        try:
            ast.parse(mutation.apply(source))
        except SyntaxError:
            continue
        seen.add(key)
        found.append(mutation)
    return sorted(found, key=lambda m: (m.line, KINDS.index(m.kind), m.new_line))
