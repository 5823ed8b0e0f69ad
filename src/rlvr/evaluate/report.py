"""report.html: one self-contained page (plots embedded as base64 PNG) of an evaluation.

Sections: headline metrics (with CoT-pass@k when a reasoning judge was given), the pass@k /
maj@k curve, the pass-rate histogram, the top disagreements, and, in compare mode, the paired
differences and the solved / lost prompts. An evaluation on environments (results whose
settings name an `env`) gets the same page, plots and compare section with its own figures
(success@1, pass@k, the successes-out-of-k histogram, stop reasons) and a few episodes
rendered turn by turn (episode_report.py). Every text from a model or a file is escaped.
This module holds the pieces and the single-turn sections; report_page.py writes the page.
"""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on servers and CI
import matplotlib.pyplot as plt  # noqa: E402

TABLE_ROWS = 20
STYLE = ("body{font-family:sans-serif;max-width:60em;margin:2em auto;color:#222}"
         "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;"
         "text-align:left;font-size:90%}th{background:#f3f3f3}code{font-size:90%}"
         "pre{white-space:pre-wrap;margin:0.2em 0}.turn{padding:2px 8px;margin:2px 0}"
         ".policy{background:#eaf2ff;border-left:4px solid #2f6fd0}"
         ".observation{background:#f2f2f2;border-left:4px solid #888}")
CURVES = (("pass_at_k", "o-"), ("maj_at_k", "s--"))


def png_base64(fig) -> str:
    """Render a matplotlib figure to a base64 PNG string and close it."""
    buffer = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buffer, format="png", dpi=90)
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def plot_curves(labelled: list[tuple[str, dict]], curves=CURVES, xlabel: str = "k (samples)"):
    """pass@k (solid) and maj@k (dashed; `curves`: which) against k, with 95% intervals, one
    colour per model; CoT-pass@k (dotted) too when a reasoning judge was given."""
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for colour, (label, result) in zip(("tab:blue", "tab:orange"), labelled):
        drawn = [(metric, style, result[metric]) for metric, style in curves]
        if "cot" in result:  # rlvr eval --cot-judge (cot_pass.py)
            drawn.append(("cot_pass_at_k", "^:", result["cot"]["cot_pass_at_k"]))
        for metric, style, values in drawn:
            ks = sorted(int(k) for k in values)
            means = [values[str(k)]["mean"] for k in ks]
            errs = [[m - values[str(k)]["ci"][0] for k, m in zip(ks, means)],
                    [values[str(k)]["ci"][1] - m for k, m in zip(ks, means)]]
            name = "CoT-pass@k" if metric == "cot_pass_at_k" else metric.replace("_at_", "@")
            ax.errorbar(ks, means, yerr=errs, fmt=style, color=colour, capsize=3, label=f"{label} {name}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("score")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    return fig


def pass_rate_bars(result: dict) -> tuple[list[str], list[int]]:
    """A single-turn result's histogram: (bar labels, prompt counts)."""
    hist = result["pass_rate_histogram"]
    return [f"{v:.2f}" for v in hist["values"]], hist["counts"]


def plot_histogram(labelled: list[tuple[str, dict]], bars=pass_rate_bars,
                   xlabel: str = "per-prompt pass rate c / n", ylabel: str = "prompts"):
    """Number of prompts at each pass rate (`bars`: result -> labels, counts), bars side by
    side for two models."""
    fig, ax = plt.subplots(figsize=(6.5, 3.5))
    width = 0.8 / len(labelled)
    for i, (colour, (label, result)) in enumerate(zip(("tab:blue", "tab:orange"), labelled)):
        counts = bars(result)[1]
        positions = [j + (i - (len(labelled) - 1) / 2) * width for j in range(len(counts))]
        ax.bar(positions, counts, width=width, color=colour, label=label)
    names = bars(labelled[0][1])[0]
    ax.set_xticks(range(len(names)), names, fontsize=8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    return fig


def table(header: list[str], rows: list[list[object]]) -> str:
    """An escaped HTML table."""
    cell = lambda tag, v: f"<{tag}>{html.escape(str(v))}</{tag}>"  # noqa: E731
    head = "".join(cell("th", h) for h in header)
    body = "".join("<tr>" + "".join(cell("td", v) for v in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def fmt(entry: dict | None) -> str:
    """'0.512 [0.480, 0.544]' from {"mean", "ci"}; a dash for a missing metric."""
    return "n/a" if entry is None else f"{entry['mean']:.3f} [{entry['ci'][0]:.3f}, {entry['ci'][1]:.3f}]"


def metrics_table(labelled: list[tuple[str, dict]]) -> str:
    """Rows: pass@k, maj@k, best-of-n; one column per model."""
    first = labelled[0][1]
    names = [(f"pass@{k}", "pass_at_k", k) for k in first["pass_at_k"]]
    names += [(f"maj@{k}", "maj_at_k", k) for k in first["maj_at_k"]]
    rows = [[name] + [fmt(r[metric][k]) for _, r in labelled] for name, metric, k in names]
    n = first["best_of_n"]["n"]
    rows.append([f"best-of-{n} by log-prob"] + [fmt(r["best_of_n"]["logprob"]) for _, r in labelled])
    rows.append([f"best-of-{n} by verifier (= pass@{n})"] + [fmt(r["best_of_n"]["verifier"]) for _, r in labelled])
    if all("cot" in r for _, r in labelled):  # rlvr eval --cot-judge (cot_pass.py)
        for key, label in (("cot_pass_at_k", "CoT-pass@{}"), ("pass_minus_cot", "pass@{k} - CoT-pass@{k}")):
            rows += [[label.format(k, k=k)] + [fmt(r["cot"][key][k]) for _, r in labelled] for k in first["pass_at_k"]]
    return table(["metric (95% CI over prompts)"] + [label for label, _ in labelled], rows)


def disagreement_table(rows: list[dict]) -> str:
    """The top disagreements: rank, prompt, gold, pass rate, entropies, answer counts."""
    shown = [[r["rank"], r["prompt"], r["gold"], f"{r['correct']}/{r['n']}", f"{r['verdict_entropy']:.2f}",
              f"{r['answer_entropy']:.2f}", ", ".join(f"{a}×{c}" for a, c in r["answers"].items())]
             for r in rows[:TABLE_ROWS]]
    header = ["rank", "prompt", "gold", "correct", "H verdict", "H answer", "answers"]
    return (f"<p>{len(rows)} prompts have mixed verdicts (some samples right, some wrong); ranked by verdict "
            f"entropy, then answer entropy (bits); the top {len(shown)}:</p>" + table(header, shown))


def compare_section(compare: dict, unit: str = "prompt") -> str:
    """Paired differences and the solved / lost prompts (`unit`: "task" for episodes)."""
    rows = [["success@1", fmt(compare["success_at_1_diff"])]] if "success_at_1_diff" in compare else []
    rows += [[f"pass@{k}", fmt(v)] for k, v in compare["pass_at_k_diff"].items()]
    rows += [[f"maj@{k}", fmt(v)] for k, v in compare.get("maj_at_k_diff", {}).items()]
    rows += [[f"CoT-pass@{k}", fmt(v)] for k, v in compare.get("cot_pass_at_k_diff", {}).items()]
    ch = compare["changes"]
    rate = "pass rate" if unit == "prompt" else "success rate"
    counts = (f"<p>{unit}s solved {ch['solved']}, lost {ch['lost']}, better {ch['better']}, worse {ch['worse']}, "
              f"same {ch['same']} (by {rate}).</p>")
    listed = [["solved", r["prompt"], r["gold"], f"{r['pass_rate_a']:.2f}", f"{r['pass_rate_b']:.2f}"]
              for r in ch["solved_prompts"][:TABLE_ROWS]]
    listed += [["lost", r["prompt"], r["gold"], f"{r['pass_rate_a']:.2f}", f"{r['pass_rate_b']:.2f}"]
               for r in ch["lost_prompts"][:TABLE_ROWS]]
    return (f"<h2>Compare (B - A, paired 95% CI over {unit}s; A is the model, B the --compare one)</h2>"
            + table(["metric", "difference"], rows) + counts
            + table(["change", unit, "gold", f"{rate} A", f"{rate} B"], listed))


def side_label(side: str, source: str | None) -> str:
    """'A: step_800' from a model folder or samples file path."""
    return f"{side}: {Path(source).name}" if source else side


def labelled_sides(results: dict) -> list[tuple[str, dict]]:
    """[("A: step_800", model result), ("B: ...", compare result)] of a results.json dict."""
    meta = results["settings"]
    labelled = [(side_label("A", meta.get("model") or meta.get("samples")), results["model"])]
    if "compare" in results:
        labelled.append((side_label("B", meta.get("compare")), results["compare"]["model"]))
    return labelled


def single_turn_sections(results: dict, disagreements: list[dict]) -> list[str]:
    labelled = labelled_sides(results)
    parts = [metrics_table(labelled),
             "<h2>pass@k and maj@k" + (" and CoT-pass@k" if "cot" in labelled[0][1] else "") + "</h2>", f"<img src='data:image/png;base64,{png_base64(plot_curves(labelled))}'>",
             "<h2>Per-prompt pass rates</h2>",
             f"<img src='data:image/png;base64,{png_base64(plot_histogram(labelled))}'>",
             "<h2>Disagreements</h2>", disagreement_table(disagreements)]
    if "compare" in results:
        parts.append(compare_section(results["compare"]["diff"]))
    return parts
