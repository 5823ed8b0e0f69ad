"""Closed integer intervals given as (start, end) pairs."""


def merge(intervals):
    """Merge overlapping or touching intervals; the result is sorted."""
    result = []
    for start, end in sorted(intervals):
        if result and start <= result[-1][1] + 1:
            result[-1] = (result[-1][0], max(result[-1][1], end))
        else:
            result.append((start, end))
    return result


def overlaps(a, b):
    """Do two intervals share at least one point?"""
    return a[0] <= b[1] and b[0] <= a[1]


def contains(interval, point):
    return interval[0] <= point <= interval[1]


def length(interval):
    """Number of integers in the interval."""
    return interval[1] - interval[0] + 1


def total_length(intervals):
    return sum(length(i) for i in merge(intervals))


def gaps(intervals):
    """The intervals between the merged intervals."""
    merged = merge(intervals)
    out = []
    for left, right in zip(merged, merged[1:]):
        out.append((left[1] + 1, right[0] - 1))
    return out
