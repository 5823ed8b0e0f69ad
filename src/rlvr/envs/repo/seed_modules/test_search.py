from search import binary_search, closest, count_equal, lower_bound, upper_bound


def test_found():
    assert binary_search([1, 3, 5, 7, 9], 7) == 3


def test_found_ends():
    assert binary_search([1, 3, 5], 1) == 0
    assert binary_search([1, 3, 5], 5) == 2


def test_not_found():
    assert binary_search([1, 3, 5], 4) == -1
    assert binary_search([], 4) == -1


def test_lower_bound():
    assert lower_bound([1, 2, 2, 2, 3], 2) == 1
    assert lower_bound([1, 2, 3], 5) == 3


def test_upper_bound():
    assert upper_bound([1, 2, 2, 2, 3], 2) == 4
    assert upper_bound([1, 2, 3], 0) == 0


def test_count_equal():
    assert count_equal([1, 2, 2, 2, 3], 2) == 3
    assert count_equal([1, 3], 2) == 0


def test_closest_middle():
    assert closest([1, 4, 10], 6) == 4


def test_closest_tie():
    assert closest([2, 4], 3) == 2


def test_closest_edges():
    assert closest([2, 4], -5) == 2
    assert closest([2, 4], 50) == 4
