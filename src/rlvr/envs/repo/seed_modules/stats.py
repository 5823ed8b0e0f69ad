"""Descriptive statistics of lists of numbers."""


def mean(values):
    if not values:
        raise ValueError("mean of no values")
    return sum(values) / len(values)


def median(values):
    ordered = sorted(values)
    n = len(ordered)
    mid = n // 2
    if n % 2 == 1:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2


def variance(values, sample=False):
    m = mean(values)
    squares = sum((v - m) ** 2 for v in values)
    return squares / (len(values) - 1 if sample else len(values))


def mode(values):
    """The most common value; the smallest one on a tie."""
    counts = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    best = max(counts.values())
    return min(v for v, c in counts.items() if c == best)


def value_range(values):
    return max(values) - min(values)


def clamp(value, low=0, high=1):
    if value < low:
        return low
    if value > high:
        return high
    return value
