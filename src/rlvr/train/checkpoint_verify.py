"""Is a checkpoint folder whole? Checked against its manifest before a resume trusts it.

With `manifest.json` (written last by `save_checkpoint`): every listed file must exist with
its recorded size and sha256. Without one (a checkpoint written before rlvr wrote manifests),
the folder must hold `state.pt` and a weights file, and every safetensors file must open with
its header covering the whole file (that catches truncation, not flipped bytes); `state.pt`
is then checked by loading it, as for any checkpoint.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from safetensors import SafetensorError, safe_open

MANIFEST = "manifest.json"
WEIGHTS = ("model.safetensors", "model.safetensors.index.json", "adapter_model.safetensors")


def verify_checkpoint(folder: Path) -> str | None:
    """None when `folder` is whole; else one line naming the damaged file and what is wrong."""
    manifest = folder / MANIFEST
    if not manifest.is_file():
        return verify_legacy(folder)
    try:
        files = json.loads(manifest.read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        return f"{manifest}: unreadable ({e})"
    for name, expected in files.items():
        problem = check_file(folder / name, expected["bytes"], expected["sha256"])
        if problem is not None:
            return problem
    return None


def check_file(path: Path, size: int, sha256: str) -> str | None:
    if not path.is_file():
        return f"{path}: missing (listed in {MANIFEST})"
    actual = path.stat().st_size
    if actual != size:
        return f"{path}: {actual} bytes, {MANIFEST} says {size}"
    with open(path, "rb") as f:
        if hashlib.file_digest(f, "sha256").hexdigest() != sha256:
            return f"{path}: its sha256 differs from {MANIFEST} (the bytes changed after it was written)"
    return None


def verify_legacy(folder: Path) -> str | None:
    if not (folder / "state.pt").is_file():
        return f"{folder / 'state.pt'}: missing"
    if not any((folder / name).is_file() for name in WEIGHTS):
        return f"{folder}: no weights file ({', '.join(WEIGHTS)})"
    for path in sorted(folder.glob("*.safetensors")):
        try:
            with safe_open(str(path), "pt"):
                pass
        except (SafetensorError, OSError) as e:
            return f"{path}: {str(e).splitlines()[0]}"
    return None
