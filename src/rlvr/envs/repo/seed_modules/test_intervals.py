from intervals import contains, gaps, length, merge, overlaps, total_length


def test_merge_overlapping():
    assert merge([(1, 3), (2, 5)]) == [(1, 5)]


def test_merge_touching():
    assert merge([(1, 2), (3, 4)]) == [(1, 4)]


def test_merge_apart():
    assert merge([(5, 6), (1, 2)]) == [(1, 2), (5, 6)]


def test_merge_nested():
    assert merge([(1, 10), (2, 3)]) == [(1, 10)]


def test_overlaps():
    assert overlaps((1, 3), (3, 5))
    assert not overlaps((1, 2), (4, 5))


def test_contains_edges():
    assert contains((1, 3), 1) and contains((1, 3), 3)
    assert not contains((1, 3), 4)


def test_length():
    assert length((2, 2)) == 1
    assert length((1, 5)) == 5


def test_total_length():
    assert total_length([(1, 3), (2, 4), (10, 10)]) == 5


def test_gaps():
    assert gaps([(1, 2), (6, 8), (4, 4)]) == [(3, 3), (5, 5)]


def test_no_gaps():
    assert gaps([(1, 5)]) == []
