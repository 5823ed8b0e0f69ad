import pytest

from stats import clamp, mean, median, mode, value_range, variance


def test_mean():
    assert mean([1, 2, 3, 4]) == 2.5


def test_mean_empty():
    with pytest.raises(ValueError):
        mean([])


def test_median_odd():
    assert median([5, 1, 3]) == 3


def test_median_even():
    assert median([4, 1, 3, 2]) == 2.5


def test_variance_population():
    assert variance([1, 2, 3, 4]) == 1.25


def test_variance_sample():
    assert variance([1, 2, 3, 4], sample=True) == pytest.approx(5 / 3)


def test_mode_tie_smallest():
    assert mode([3, 1, 3, 1, 2]) == 1


def test_mode():
    assert mode([7, 7, 2]) == 7


def test_range():
    assert value_range([4, -2, 9]) == 11


def test_clamp():
    assert clamp(5, 0, 3) == 3
    assert clamp(-1, 0, 3) == 0
    assert clamp(2, 0, 3) == 2


def test_clamp_default():
    assert clamp(0.5) == 0.5
    assert clamp(7) == 1
