"""Helpers for lists."""


def chunks(items, size=2):
    if size < 1:
        raise ValueError("size must be positive")
    return [items[i:i + size] for i in range(0, len(items), size)]


def windows(items, size):
    return [items[i:i + size] for i in range(len(items) - size + 1)]


def running_sum(items):
    total, out = 0, []
    for item in items:
        total += item
        out.append(total)
    return out


def dedupe(items):
    """Drop repeats, keeping the first of each."""
    seen, out = set(), []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def flatten(nested):
    out = []
    for item in nested:
        if isinstance(item, list):
            out.extend(flatten(item))
        else:
            out.append(item)
    return out


def rotate(items, steps=1):
    if not items:
        return []
    steps = steps % len(items)
    return items[steps:] + items[:steps]
