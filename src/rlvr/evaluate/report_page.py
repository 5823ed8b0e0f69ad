"""Write report.html (report.py's pieces): the single-turn sections, or an evaluation on
environments' (episode_report.py), under one title and the settings line."""

from __future__ import annotations

import html
from pathlib import Path

from rlvr.evaluate.episode_report import episode_sections
from rlvr.evaluate.report import STYLE, single_turn_sections


def write_report(path: Path, results: dict, disagreements: list[dict],
                 trajectories: dict[str, list[dict]] | None = None) -> Path:
    """Write report.html for `results` (the results.json dict) and the mined disagreements;
    an evaluation on environments (settings with "env") also shows `trajectories`, a few
    episodes of each side ({"model": [...], "compare": [...]}, episodes.jsonl rows)."""
    meta = results["settings"]
    if "env" in meta:
        sections = episode_sections(results, disagreements, trajectories or {})
    else:
        sections = single_turn_sections(results, disagreements)
    title = "rlvr eval" + (f" on {meta['env']} episodes" if "env" in meta else "")
    parts = [f"<html><head><meta charset='utf-8'><title>{html.escape(title)}</title><style>{STYLE}</style>"
             f"</head><body><h1>{html.escape(title)}</h1>",
             "<p>" + html.escape(", ".join(f"{k} = {v}" for k, v in meta.items())) + "</p>",
             *sections, "</body></html>"]
    path.write_text("\n".join(parts), encoding="utf-8")
    return path
