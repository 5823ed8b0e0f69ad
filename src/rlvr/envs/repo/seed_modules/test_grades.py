from grades import average, curve, histogram, letter, passed


def test_letters():
    assert [letter(s) for s in (95, 85, 75, 65, 55)] == ["A", "B", "C", "D", "F"]


def test_letter_edges():
    assert letter(90) == "A" and letter(80) == "B" and letter(60) == "D"


def test_passed():
    assert passed(60) and not passed(59)


def test_passed_mark():
    assert passed(50, pass_mark=50)


def test_average():
    assert average([70, 80, 90]) == 80


def test_average_drop_lowest():
    assert average([10, 80, 90], drop_lowest=True) == 85


def test_curve():
    assert curve([60, 70, 80], 75) == [65, 75, 85]


def test_curve_cap():
    assert curve([90, 100], 100) == [95, 100]


def test_histogram():
    assert histogram([95, 91, 70, 10]) == {"A": 2, "C": 1, "F": 1}
