import pytest

from sequences import chunks, dedupe, flatten, rotate, running_sum, windows


def test_chunks():
    assert chunks([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]


def test_chunks_default():
    assert chunks([1, 2, 3, 4]) == [[1, 2], [3, 4]]


def test_chunks_bad_size():
    with pytest.raises(ValueError):
        chunks([1], 0)


def test_windows():
    assert windows([1, 2, 3, 4], 3) == [[1, 2, 3], [2, 3, 4]]


def test_running_sum():
    assert running_sum([1, 2, 3]) == [1, 3, 6]


def test_dedupe():
    assert dedupe([3, 1, 3, 2, 1]) == [3, 1, 2]


def test_flatten():
    assert flatten([1, [2, [3, 4]], 5]) == [1, 2, 3, 4, 5]


def test_rotate():
    assert rotate([1, 2, 3, 4], 1) == [2, 3, 4, 1]
    assert rotate([1, 2, 3], 4) == [2, 3, 1]


def test_rotate_default_and_empty():
    assert rotate([1, 2]) == [2, 1]
    assert rotate([]) == []
