"""Searching sorted lists."""


def binary_search(items, target):
    """Index of `target` in sorted `items`, or -1."""
    low, high = 0, len(items) - 1
    while low <= high:
        mid = (low + high) // 2
        if items[mid] == target:
            return mid
        if items[mid] < target:
            low = mid + 1
        else:
            high = mid - 1
    return -1


def lower_bound(items, target):
    """First index whose item is >= target."""
    low, high = 0, len(items)
    while low < high:
        mid = (low + high) // 2
        if items[mid] < target:
            low = mid + 1
        else:
            high = mid
    return low


def upper_bound(items, target):
    """First index whose item is > target."""
    low, high = 0, len(items)
    while low < high:
        mid = (low + high) // 2
        if items[mid] <= target:
            low = mid + 1
        else:
            high = mid
    return low


def count_equal(items, target):
    return upper_bound(items, target) - lower_bound(items, target)


def closest(items, target):
    """The item nearest to target; the smaller one on a tie."""
    index = lower_bound(items, target)
    if index == 0:
        return items[0]
    if index == len(items):
        return items[-1]
    before, after = items[index - 1], items[index]
    return before if target - before <= after - target else after
