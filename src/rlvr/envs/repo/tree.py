"""A repository as a value: `Tree` maps each file's path (posix, relative) to its text.

A task names its repository in one of three ways (`rlvr.envs.repo.task`):

- a packed tree: {"files": {"pkg/mod.py": "...", ...}} inside the row itself;
- a local folder: every text file under it (`.git`, `__pycache__` and compiled files left out);
- a local git checkout at a commit: the files of that commit (`git ls-tree` / `git show`).

A tree is checked against the sandbox's limits when it is made (`TreeLimits`): too many files,
too many bytes, a file that is not UTF-8 text, a link or a path that climbs out of the root is
refused by name (`TreeError`), never truncated. Compiled files are never part of a tree, so a
`.pyc` of a reference solution cannot reach an episode.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from rlvr.errors import RlvrError

SKIPPED_DIRS = frozenset({".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".venv", ".tox"})
SKIPPED_SUFFIXES = (".pyc", ".pyo", ".so")

Tree = dict[str, str]


class TreeError(RlvrError):
    """A repository cannot be used: the message names it and what is wrong."""


@dataclass(frozen=True)
class TreeLimits:
    """What a repository may hold to fit the sandbox (its scratch is a small tmpfs).

    Attributes:
        max_files: files in the tree.
        max_bytes: all files' UTF-8 bytes together (the sandbox's scratch must hold them).
        max_file_bytes: one file.
    """

    max_files: int = 400
    max_bytes: int = 4 << 20
    max_file_bytes: int = 512 << 10


def safe_path(path: str) -> str:
    """`path` normalised to a relative posix path inside the repository; ValueError otherwise.

    Refused: empty, absolute, any `..` part, a part in `SKIPPED_DIRS` (".git" included), NUL.
    """
    if not isinstance(path, str) or not path.strip() or "\0" in path:
        raise ValueError(f"path {path!r} is empty or not text")
    pure = PurePosixPath(path.strip().replace("\\", "/"))
    if pure.is_absolute():
        raise ValueError(f"path {path!r} is outside the repository (absolute)")
    parts = [p for p in pure.parts if p != "."]
    if ".." in parts:
        raise ValueError(f"path {path!r} is outside the repository ('..')")
    if not parts:
        raise ValueError(f"path {path!r} names the repository itself, not a file")
    hidden = [p for p in parts if p in SKIPPED_DIRS]
    if hidden:
        raise ValueError(f"path {path!r} is inside {hidden[0]}, which is not part of the repository")
    return "/".join(parts)


def check_tree(tree: Tree, name: str, limits: TreeLimits = TreeLimits()) -> Tree:
    """`tree` with every path checked and the limits applied; TreeError naming `name` if not."""
    if not isinstance(tree, dict) or not tree:
        raise TreeError(f"repository {name}: no files")
    if len(tree) > limits.max_files:
        raise TreeError(f"repository {name} is too large for the sandbox: {len(tree)} files "
                        f"(limit {limits.max_files})")
    total, out = 0, {}
    for path, text in tree.items():
        try:
            clean = safe_path(path)
        except ValueError as error:
            raise TreeError(f"repository {name}: {error}") from None
        if not isinstance(text, str):
            raise TreeError(f"repository {name}: {path} is not text")
        size = len(text.encode())
        if size > limits.max_file_bytes:
            raise TreeError(f"repository {name} is too large for the sandbox: {path} has {size} "
                            f"bytes (limit {limits.max_file_bytes})")
        total += size
        out[clean] = text
    if total > limits.max_bytes:
        raise TreeError(f"repository {name} is too large for the sandbox: {total} bytes "
                        f"(limit {limits.max_bytes})")
    return out


def _wanted(path: Path, root: Path) -> bool:
    relative = path.relative_to(root)
    return not any(p in SKIPPED_DIRS for p in relative.parts) and not path.name.endswith(SKIPPED_SUFFIXES)


def tree_from_folder(root: str | Path, limits: TreeLimits = TreeLimits()) -> Tree:
    """Every text file under `root` (see the module docstring); TreeError naming the folder."""
    root = Path(root)
    if not root.is_dir():
        raise TreeError(f"repository {root}: no such folder")
    tree, count = {}, 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
        for filename in sorted(filenames):
            path = Path(dirpath) / filename
            if not _wanted(path, root):
                continue
            count += 1
            if count > limits.max_files:
                raise TreeError(f"repository {root} is too large for the sandbox: more than "
                                f"{limits.max_files} files")
            if path.is_symlink():
                raise TreeError(f"repository {root}: {path.relative_to(root)} is a link (not allowed)")
            tree[path.relative_to(root).as_posix()] = _read_text(path, root)
    return check_tree(tree, str(root), limits)


def _read_text(path: Path, root: Path) -> str:
    size = path.stat().st_size
    if size > 16 << 20:  # read nothing huge just to refuse it
        raise TreeError(f"repository {root} is too large for the sandbox: {path.relative_to(root)} "
                        f"has {size} bytes")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise TreeError(f"repository {root}: {path.relative_to(root)} is not UTF-8 text") from None


def tree_from_git(root: str | Path, commit: str, limits: TreeLimits = TreeLimits()) -> Tree:
    """The files of `commit` in the git checkout at `root` (the work tree is not read)."""
    def git(*args: str) -> bytes:
        run = subprocess.run(["git", "-C", str(root), *args], capture_output=True, timeout=60)
        if run.returncode != 0:
            raise TreeError(f"repository {root} at {commit}: git {args[0]} failed: "
                            f"{run.stderr.decode(errors='replace').strip()[:300]}")
        return run.stdout

    listing = git("ls-tree", "-r", "-z", "--full-tree", commit).split(b"\0")
    entries = [line.decode().split("\t", 1) for line in listing if line]
    files = [(meta.split(), path) for meta, path in entries]
    if len(files) > limits.max_files:
        raise TreeError(f"repository {root} is too large for the sandbox: {len(files)} files "
                        f"(limit {limits.max_files})")
    tree = {}
    for (mode, _kind, sha), path in files:
        if mode == "120000":
            raise TreeError(f"repository {root} at {commit}: {path} is a link (not allowed)")
        if not _wanted(Path(root) / path, Path(root)):
            continue
        try:
            tree[path] = git("cat-file", "blob", sha).decode("utf-8")
        except UnicodeDecodeError:
            raise TreeError(f"repository {root} at {commit}: {path} is not UTF-8 text") from None
    return check_tree(tree, f"{root}@{commit}", limits)


def write_tree(tree: Tree, folder: str | Path) -> None:
    """Write every file of `tree` under `folder` (made if missing)."""
    for path, text in tree.items():
        target = Path(folder) / safe_path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
