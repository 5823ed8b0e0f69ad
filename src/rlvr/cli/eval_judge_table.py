"""The plain-text table of `rlvr eval-judge` (the same numbers as its `--json`)."""

from __future__ import annotations


def _ci(entry: dict) -> str:
    low, high = entry["ci"]
    return f"{entry['mean']:.3f} [{low:.3f}, {high:.3f}]"


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _pointwise(r: dict, threshold: float) -> list[str]:
    c = r["confusion"]
    lines = [f"pointwise: {r['rows']} rows (yes when P(yes) >= {threshold:g})",
             f"  accuracy           {_ci(r['accuracy'])}   majority-class baseline {r['majority_baseline']:.3f}",
             f"  precision / recall {_num(r['precision'])} / {_num(r['recall'])}   F1 {_num(r['f1'])}"
             f"   (tp {c['tp']}, fp {c['fp']}, fn {c['fn']}, tn {c['tn']})",
             f"  calibration        ECE {r['ece']:.3f} over {r['bins']} bins   Brier {r['brier']:.3f}",
             "    bin          rows  mean P(yes)  fraction correct"]
    for b in r["reliability"]:
        lo, hi = b["bin"]
        lines.append(f"    [{lo:.1f}, {hi:.1f}]  {b['rows']:>5}  {b['mean_p_yes']:>11.3f}  "
                     f"{b['fraction_correct']:>16.3f}")
    return lines


def _verifier(r: dict, name: str) -> list[str]:
    return [f"verifier agreement ({name}, {r['rows']} rows with a gold answer)",
            f"  agreement {r['agreement']:.3f}   Cohen's kappa {_num(r['kappa'])}   "
            f"accuracy vs labels: judge {r['judge_accuracy']:.3f}, verifier {r['verifier_accuracy']:.3f}"]


def _best_of_n(r: dict) -> list[str]:
    return [f"best-of-N: {r['groups']} prompts, N = {', '.join(map(str, r['n']))}",
            f"  judge's pick       {_ci(r['judge_pick'])}",
            f"  random pick        {_ci(r['random_pick'])}",
            f"  oracle (any right) {_ci(r['oracle'])}",
            f"  judge - random     {_ci(r['gain_over_random'])}  (paired over prompts)"]


def _pairwise(r: dict) -> list[str]:
    return [f"pairwise: {r['pairs']} pairs, each judged in both orders",
            f"  accuracy           {_ci(r['accuracy'])}   consistent in both orders {r['consistent_accuracy']:.3f}",
            f"  position flips     {_ci(r['flip_rate'])}",
            f"  prefers first      {r['first_preference']:.3f} of judgements (0.5 = no position bias)"
            f"   mean P(first better) {r['mean_p_first']:.3f}"]


def table(result: dict) -> str:
    lines = [f"judge {result['judge']} on {result['file']}  (95% bootstrap CI, seed {result['seed']})"]
    if "pointwise" in result:
        lines += _pointwise(result["pointwise"], result["threshold"])
    if "verifier_agreement" in result:
        lines += _verifier(result["verifier_agreement"], result["verifier"])
    if "best_of_n" in result:
        lines += _best_of_n(result["best_of_n"])
    if "pairwise" in result:
        lines += _pairwise(result["pairwise"])
    return "\n".join(lines)
