"""Where a recipe's relative paths (model.path, task files, env.db_path, ...) are read from."""

from __future__ import annotations

from pathlib import Path


def resolve_path(path: str, base: Path) -> Path:
    """Relative paths in a recipe are read from the working directory, else from `base` (the repo)."""
    p = Path(path)
    if p.is_absolute() or p.exists():
        return p
    return base / p
