"""The tools of a repository episode, over the episode's own work tree.

    list_files(path)               the files under a folder ("" or "." for all)
    find_files(pattern)            paths matching a glob ("*.py", "tests/*")
    read_file(path, start, end)    lines start..end (1-based, numbered; end 0: to the end)
    grep(pattern, path)            lines matching a regular expression, as path:line: text
    edit(path, search, replace)    replace the one occurrence of `search` (empty search and a
                                   new path: create the file)
    apply_patch(patch)             apply a unified diff (parsed with unidiff)
    run(command)                   a shell command on a copy of the tree in the sandbox
    submit()                       end the episode; the hidden tests score the work tree

File tools never run code: they read and write the tree in this process, and every path goes
through `safe_path` first (absolute paths, `..`, .git refused). A path outside the repository,
a missing file, a search text that occurs 0 or 2+ times, or a patch that does not apply raises
an error whose message the ToolBox turns into the observation ("error: edit raised
PatchError: ..."); the episode goes on, and the tree is unchanged.
"""

from __future__ import annotations

import fnmatch
import functools
import re

from rlvr.envs.repo.located import fix_line
from rlvr.envs.repo.patches import apply_patch as apply_unified, replace_block
from rlvr.envs.repo.run_command import run_in_sandbox
from rlvr.envs.repo.tree import Tree, safe_path
from rlvr.rewards.sandbox import Sandbox

MAX_LISTED = 200
MAX_MATCHES = 50


class WorkTree:
    """The episode's copy of the repository and its tools (bound methods, for a ToolBox)."""

    def __init__(self, tree: Tree, sandbox: Sandbox, run_timeout_s: float = 10.0, max_output: int = 2000):
        self.files, self.sandbox = dict(tree), sandbox
        self.run_timeout_s, self.max_output = run_timeout_s, max_output
        self.submitted = False
        self.location: tuple[str, int] | None = None  # (path, line) that fix edits, in the located tier
        self.calls: list[tuple[str, dict, str]] = []  # (tool, arguments, result or error): the tampering monitor's

    def _existing(self, path: str) -> str:
        clean = safe_path(path)
        if clean not in self.files:
            raise FileNotFoundError(f"no file {clean} in the repository")
        return clean

    def list_files(self, path: str = "") -> str:
        """List the files of the repository under a folder.

        Args:
            path: the folder, relative to the repository root ("" for all files)
        """
        prefix = "" if path.strip() in ("", ".", "./") else safe_path(path) + "/"
        found = sorted(p for p in self.files if p.startswith(prefix))
        if not found:
            return f"no files under {path!r}"
        more = f"\n[{len(found) - MAX_LISTED} more]" if len(found) > MAX_LISTED else ""
        return "\n".join(found[:MAX_LISTED]) + more

    def find_files(self, pattern: str) -> str:
        """Find files whose path matches a glob pattern.

        Args:
            pattern: a glob such as "*.py" or "tests/test_*.py"
        """
        found = sorted(p for p in self.files if fnmatch.fnmatch(p, pattern) or fnmatch.fnmatch(p.rsplit("/", 1)[-1], pattern))
        return "\n".join(found[:MAX_LISTED]) if found else f"no file matches {pattern!r}"

    def read_file(self, path: str, start: int = 1, end: int = 0) -> str:
        """Read lines of a file, numbered.

        Args:
            path: the file, relative to the repository root
            start: the first line (1-based)
            end: the last line (0: the end of the file)
        """
        lines = self.files[self._existing(path)].splitlines()
        if start < 1 or (end and end < start):
            raise ValueError(f"bad line range {start}..{end} (the file has {len(lines)} lines)")
        chosen = lines[start - 1:end or None]
        return "\n".join(f"{start + i}: {line}" for i, line in enumerate(chosen)) or f"(no lines; the file has {len(lines)})"

    def grep(self, pattern: str, path: str = "") -> str:
        """Search the files for lines matching a regular expression.

        Args:
            pattern: a Python regular expression
            path: a file or folder to search ("" for the whole repository)
        """
        try:
            regex = re.compile(pattern)
        except re.error as error:
            raise ValueError(f"bad regular expression {pattern!r}: {error}") from None
        prefix = "" if path.strip() in ("", ".") else safe_path(path)
        hits = [f"{p}:{n}: {line}" for p, text in sorted(self.files.items())
                if p == prefix or p.startswith(prefix + "/" if prefix else "")
                for n, line in enumerate(text.splitlines(), 1) if regex.search(line)]
        return "\n".join(hits[:MAX_MATCHES]) + (f"\n[{len(hits) - MAX_MATCHES} more]" if len(hits) > MAX_MATCHES else "") if hits else "no match"

    def edit(self, path: str, search: str, replace: str) -> str:
        """Replace one exact block of text in a file (or create a new file).

        Args:
            path: the file, relative to the repository root
            search: the exact text to replace; it must occur exactly once ("" to create a new file)
            replace: the new text
        """
        clean = safe_path(path)
        if search == "" and clean not in self.files:
            self.files[clean] = replace
            return f"created {clean}"
        self.files[clean] = replace_block(self.files[self._existing(clean)], search, replace, clean)
        return f"edited {clean}"

    def fix(self, old: str, new: str) -> str:
        """Replace the one token `old` of the located line by `new` (the located tier's edit).

        Args:
            old: the token to replace; it must occur exactly once in the line as a whole token
            new: the replacement
        """
        if self.location is None:
            raise ValueError("fix needs a located line (env.observation = 'located')")
        path, line = self.location
        clean = self._existing(path)
        self.files[clean] = fix_line(self.files[clean], line, old, new, clean)
        return f"fixed {clean} line {line}"

    def apply_patch(self, patch: str) -> str:
        """Apply a unified diff (--- a/PATH, +++ b/PATH, @@ hunks) to the repository.

        Args:
            patch: the unified diff
        """
        self.files = apply_unified(self.files, patch)
        return "applied"

    def run(self, command: str) -> str:
        """Run a shell command in a copy of the repository (e.g. python -m pytest tests); file changes are kept.

        Args:
            command: the shell command
        """
        output, self.files = run_in_sandbox(self.sandbox, self.files, command, self.run_timeout_s, self.max_output)
        return output

    def submit(self) -> str:
        """Submit the repository as it is now; the hidden tests decide."""
        self.submitted = True
        return "submitted"

    def tools(self, located: bool = False) -> list:
        """The tools, each recording its calls in `calls` (located: fix and submit only)."""
        methods = [self.fix, self.submit] if located else [
            self.list_files, self.find_files, self.read_file, self.grep, self.edit, self.apply_patch, self.run, self.submit]
        return [self._recorded(method) for method in methods]

    def _recorded(self, method):
        @functools.wraps(method)
        def tool(**arguments):
            try:
                out = method(**arguments)
            except Exception as error:  # recorded, then the ToolBox makes it the observation
                self.calls.append((method.__name__, arguments, f"{type(error).__name__}: {error}"[:500]))
                raise
            self.calls.append((method.__name__, arguments, str(out)[:500]))
            return out

        return tool
