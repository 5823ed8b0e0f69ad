"""Turning scores into grades."""


def letter(score):
    if score >= 90:
        return "A"
    if score >= 80:
        return "B"
    if score >= 70:
        return "C"
    if score >= 60:
        return "D"
    return "F"


def passed(score, pass_mark=60):
    return score >= pass_mark


def average(scores, drop_lowest=False):
    values = sorted(scores)
    if drop_lowest and len(values) > 1:
        values = values[1:]
    return sum(values) / len(values)


def curve(scores, target=75):
    """Shift all scores so their mean is `target`; none above 100."""
    shift = target - sum(scores) / len(scores)
    return [min(100, s + shift) for s in scores]


def histogram(scores):
    counts = {}
    for s in scores:
        grade = letter(s)
        counts[grade] = counts.get(grade, 0) + 1
    return counts
