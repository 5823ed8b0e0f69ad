"""report.html's sections for an evaluation on environments (report.write_report calls
`episode_sections` when the results' settings name an `env`).

Built from report.py's parts (tables, the pass@k curve, the side-by-side histogram, the
compare section): headline success@1 / pass@k with turns, tool calls and raises; the pass@k
curve; tasks by successes out of k; the share of each stop reason; the disagreeing tasks; in
compare mode the paired differences and solved / lost tasks; then a few episodes of each
side turn by turn, the policy's text and the environment's observations in differently
marked blocks. Every text from the model, the environment or the task file is escaped.
"""

from __future__ import annotations

import html
import json

from rlvr.evaluate.report import (TABLE_ROWS, compare_section, fmt, labelled_sides, plot_curves, plot_histogram,
                                  png_base64, table)


def episode_metrics_table(labelled: list[tuple[str, dict]]) -> str:
    """Rows: success@1, pass@k, turns, tool calls, raises; one column per model."""
    first = labelled[0][1]
    rows = [["success@1"] + [fmt(r["success_at_1"]) for _, r in labelled]]
    rows += [[f"pass@{k}"] + [fmt(r["pass_at_k"][k]) for _, r in labelled] for k in first["pass_at_k"]]
    rows += [["turns per episode"] + [f"{r['turns_mean']:.2f}" for _, r in labelled],
             ["tool calls per episode"] + [f"{r['tool_calls_mean']:.2f}" for _, r in labelled],
             ["episodes that raised"] + [r["env_errors"] for _, r in labelled],
             ["tasks x episodes"] + [f"{r['tasks']} x {r['episodes_per_task']}" for _, r in labelled]]
    return table(["metric (95% CI over tasks)"] + [label for label, _ in labelled], rows)


def stop_reasons_table(labelled: list[tuple[str, dict]]) -> str:
    reasons = sorted({reason for _, r in labelled for reason in r["stop_reasons"]})
    rows = [[reason] + [f"{r['stop_reasons'].get(reason, 0.0):.1%}" for _, r in labelled] for reason in reasons]
    return table(["stop reason (share of episodes)"] + [label for label, _ in labelled], rows)


def success_bars(result: dict) -> tuple[list[str], list[int]]:
    """An episode result's histogram: c = 0..k and the tasks with c successes."""
    return list(result["histogram"]), list(result["histogram"].values())


def disagreeing_tasks_table(rows: list[dict]) -> str:
    shown = [[r["rank"], r["source"], r["prompt"], r["gold"], f"{r['successes']}/{r['k']}",
              f"{r['verdict_entropy']:.2f}"] for r in rows[:TABLE_ROWS]]
    return (f"<p>{len(rows)} tasks have episodes that succeed and episodes that fail; ranked by verdict "
            f"entropy (bits); the top {len(shown)} (all their episodes: disagreements.jsonl):</p>"
            + table(["rank", "task", "prompt", "gold", "successes", "H verdict"], shown))


def turn_block(kind: str, title: str, text: str) -> str:
    """One marked block: kind "policy" (the model's action) or "observation" (the environment's)."""
    return (f"<div class='turn {kind}'><b>{html.escape(title)}</b><pre>{html.escape(text)}</pre></div>")


def trajectory_html(row: dict) -> str:
    """One episode (an episodes.jsonl row) turn by turn."""
    ep = row["episode"] or {}
    verdict = "success" if row["success"] else "failure"
    head = (f"task {row['source']}, episode {row['index']} (seed {ep.get('seed')}): {verdict}, "
            f"stop reason {row['stop_reason']}, r_T = {row['reward']:g}")
    parts = [f"<h3>{html.escape(head)}</h3>",
             turn_block("observation", "environment (first observation)",
                        ep.get("first_observation", row.get("prompt", "")))]
    for i, turn in enumerate(ep.get("turns", []), start=1):
        parts.append(turn_block("policy", f"policy, turn {i} ({turn['policy_tokens']} tokens, "
                                f"finish {turn['finish']})", turn["action"]))
        calls = f", tool calls {json.dumps(turn['tool_calls'])}" if turn.get("tool_calls") else ""
        parts.append(turn_block("observation", f"environment, reward {turn['reward']:g}{calls}", turn["observation"]))
    if row.get("error"):
        parts.append(turn_block("observation", "the environment raised", row["error"]))
    if ep.get("repo"):
        parts.append(repo_block(ep["repo"]))
    return "".join(parts)


def repo_block(repo: dict) -> str:
    """A repository episode's outcome and its diff against the base (env.kind = "repo")."""
    flags = ", ".join(repo.get("tampering", [])) or "none"
    title = f"diff against the base ({repo.get('reason', '')}; tampering flags: {flags})"
    return turn_block("observation diff", title, repo.get("diff") or "(no change)")


def repo_metrics_table(labelled: list[tuple[str, dict]]) -> str:
    """Resolved rate, pass@k of resolved, tests passed, similarity, tampering; one column a model."""
    first = labelled[0][1]["repo"]
    rows = [["resolved@1"] + [fmt(r["repo"]["resolved_at_1"]) for _, r in labelled]]
    rows += [[f"resolved pass@{k}"] + [fmt(r["repo"]["resolved_pass_at_k"][k]) for _, r in labelled]
             for k in first["resolved_pass_at_k"]]
    rows += [["listed tests passed"] + [f"{r['repo']['tests_passed_share']:.1%}" for _, r in labelled],
             ["patch similarity"] + [("-" if r["repo"]["similarity_mean"] is None else f"{r['repo']['similarity_mean']:.3f}")
                                     for _, r in labelled],
             ["episodes flagged for tampering"] + [f"{r['repo']['tampered_episodes']:.1%}" for _, r in labelled]]
    flags = sorted({f for _, r in labelled for f in r["repo"]["tampering"]})
    rows += [[f"flag {f}"] + [f"{r['repo']['tampering'].get(f, 0.0):.1%}" for _, r in labelled] for f in flags]
    return table(["repository metric (95% CI over tasks)"] + [label for label, _ in labelled], rows)


def trajectories_section(label: str, rows: list[dict]) -> str:
    if not rows:
        return ""
    return (f"<h2>Episodes of {html.escape(label)}</h2><p>The first successful and failed episodes in task "
            f"order (all of them: episodes.jsonl); blue: the policy's text, grey: the environment's.</p>"
            + "".join(trajectory_html(r) for r in rows))


def episode_sections(results: dict, disagreements: list[dict], trajectories: dict[str, list[dict]]) -> list[str]:
    labelled = labelled_sides(results)
    curve = plot_curves(labelled, curves=(("pass_at_k", "o-"),), xlabel="k (episodes)")
    hist = plot_histogram(labelled, bars=success_bars, xlabel="successes c out of k episodes", ylabel="tasks")
    repo = [repo_metrics_table(labelled)] if all("repo" in r for _, r in labelled) else []
    parts = [episode_metrics_table(labelled), *repo,
             "<h2>pass@k</h2>", f"<img src='data:image/png;base64,{png_base64(curve)}'>",
             "<h2>Tasks by successes</h2>", f"<img src='data:image/png;base64,{png_base64(hist)}'>",
             "<h2>Stop reasons</h2>", stop_reasons_table(labelled),
             "<h2>Disagreements</h2>", disagreeing_tasks_table(disagreements)]
    if "compare" in results:
        parts.append(compare_section(results["compare"]["diff"], unit="task"))
    for (label, _), side in zip(labelled, ("model", "compare")):
        parts.append(trajectories_section(label, trajectories.get(side, [])))
    return parts
