"""Patches between trees: the diff of two trees in git's format, and applying a unified diff.

`diff_trees(base, new)` is what `git diff` against the base commit prints for a work tree
(`diff --git a/P b/P`, `--- a/P` / `+++ b/P`, /dev/null for added and deleted files, three
lines of context), made with difflib so that it needs neither git nor a .git folder that the
agent could reach. `apply_patch(tree, text)` parses a unified diff with `unidiff` and applies
it exactly: each hunk's context and removed lines must match the file where the hunk says
(or, as `patch` does, at the nearest offset where they match). Anything else raises
`PatchError` saying which file and hunk failed and why; the tree is then left as it was.
"""

from __future__ import annotations

import difflib

import unidiff

from rlvr.envs.repo.tree import Tree, safe_path


class PatchError(ValueError):
    """A patch that cannot be parsed or applied (the message says where)."""


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _file_diff(path: str, old: str | None, new: str | None) -> str:
    """One file's section of the diff: header, then difflib's hunks (3 lines of context)."""
    a = "/dev/null" if old is None else f"a/{path}"
    b = "/dev/null" if new is None else f"b/{path}"
    body = list(difflib.unified_diff(_lines(old or ""), _lines(new or ""), a, b, n=3))
    if not body:
        return ""
    fixed = [line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in body]
    mode = "new file mode 100644\n" if old is None else "deleted file mode 100644\n" if new is None else ""
    return f"diff --git a/{path} b/{path}\n{mode}" + "".join(fixed)


def diff_trees(base: Tree, new: Tree) -> str:
    """The unified diff that turns `base` into `new`, files in path order ("" when equal)."""
    paths = sorted(set(base) | set(new))
    return "".join(_file_diff(p, base.get(p), new.get(p)) for p in paths if base.get(p) != new.get(p))


def parse_patch(text: str) -> unidiff.PatchSet:
    """The patch as `unidiff` reads it; PatchError when it is not a unified diff."""
    if not isinstance(text, str) or not text.strip():
        raise PatchError("the patch is empty")
    try:
        patch = unidiff.PatchSet(text if text.endswith("\n") else text + "\n")
    except unidiff.UnidiffParseError as error:
        raise PatchError(f"not a unified diff: {error}") from None
    if not len(patch):
        raise PatchError("no file headers (--- a/PATH / +++ b/PATH) found in the patch")
    return patch


def _target_path(patched: unidiff.PatchedFile) -> str:
    name = patched.source_file if patched.is_removed_file else patched.target_file
    for prefix in ("a/", "b/"):
        if name.startswith(prefix):
            name = name[len(prefix):]
            break
    try:
        return safe_path(name)
    except ValueError as error:
        raise PatchError(str(error)) from None


def apply_patch(tree: Tree, text: str) -> Tree:
    """A new tree: `tree` with the unified diff `text` applied (see the module docstring)."""
    out = dict(tree)
    for patched in parse_patch(text):
        path = _target_path(patched)
        if patched.is_added_file:
            if path in out:
                raise PatchError(f"{path}: the patch adds this file, but it exists already")
            out[path] = _apply_hunks(path, "", patched)
        elif path not in out:
            raise PatchError(f"{path}: no such file in the repository")
        elif patched.is_removed_file:
            del out[path]
        else:
            out[path] = _apply_hunks(path, out[path], patched)
    return out


def _apply_hunks(path: str, text: str, patched: unidiff.PatchedFile) -> str:
    lines, shift = _lines(text), 0
    for number, hunk in enumerate(patched, 1):
        old, new = _sides(hunk)
        at = _find(lines, old, max(hunk.source_start - 1, 0) + shift)
        if at is None:
            want = "".join(old[:3]).rstrip("\n")
            raise PatchError(f"{path}: hunk {number} (@@ -{hunk.source_start},{hunk.source_length} @@) "
                             f"does not apply: its context/removed lines are not in the file "
                             f"(first of them: {want!r})")
        lines[at:at + len(old)] = new
        shift += len(new) - len(old)
    return "".join(_newline_fixed(lines))


def _sides(hunk: unidiff.Hunk) -> tuple[list[str], list[str]]:
    """(the lines a hunk expects, the lines it leaves), a "\\ No newline" marker honoured."""
    old, new, last = [], [], ()
    for line in hunk:
        if line.line_type == "\\":  # the line before it has no newline
            for side in last:
                side[-1] = side[-1].rstrip("\n")
            continue
        last = (old, new) if line.is_context else (old,) if line.is_removed else (new,)
        for side in last:
            side.append(line.value)
    return old, new


def _newline_fixed(lines: list[str]) -> list[str]:
    """unidiff drops "\\ No newline" markers into the values; a line without "\\n" may only end a file."""
    return [line if line.endswith("\n") or i == len(lines) - 1 else line + "\n" for i, line in enumerate(lines)]


def _find(lines: list[str], block: list[str], near: int) -> int | None:
    """Where `block` occurs in `lines`, the start nearest to `near` (trailing newlines ignored)."""
    if not block:
        return min(near, len(lines))
    want = [b.rstrip("\n") for b in block]
    starts = [i for i in range(len(lines) - len(block) + 1)
              if [x.rstrip("\n") for x in lines[i:i + len(block)]] == want]
    return min(starts, key=lambda i: abs(i - near)) if starts else None


def replace_block(text: str, search: str, replace: str, path: str) -> str:
    """`text` with the one occurrence of `search` replaced; PatchError when it occurs 0 or 2+ times."""
    if not search:
        raise PatchError(f"{path}: the search text is empty (to create a file, give an empty file's path "
                         "and put its text in replace)")
    count = text.count(search)
    if count != 1:
        where = "does not occur" if count == 0 else f"occurs {count} times (make it unique)"
        raise PatchError(f"{path}: the search text {where}")
    return text.replace(search, replace, 1)


def touched_files(text: str) -> list[str]:
    """The paths a unified diff changes, in its order (PatchError if it cannot be parsed)."""
    return [_target_path(p) for p in parse_patch(text)]
