from calendar_math import add_days, day_of_year, days_in_month, days_in_year, is_leap


def test_leap_years():
    assert is_leap(2024) and is_leap(2000)
    assert not is_leap(1900) and not is_leap(2023)


def test_days_in_february():
    assert days_in_month(2024, 2) == 29
    assert days_in_month(2023, 2) == 28


def test_days_in_month():
    assert days_in_month(2023, 1) == 31
    assert days_in_month(2023, 4) == 30
    assert days_in_month(2023, 12) == 31


def test_day_of_year_first():
    assert day_of_year(2023, 1, 1) == 1


def test_day_of_year_march():
    assert day_of_year(2024, 3, 1) == 61
    assert day_of_year(2023, 3, 1) == 60


def test_add_days_same_month():
    assert add_days((2023, 5, 10), 5) == (2023, 5, 15)


def test_add_days_month_end():
    assert add_days((2023, 1, 31), 1) == (2023, 2, 1)


def test_add_days_year_end():
    assert add_days((2023, 12, 31), 1) == (2024, 1, 1)


def test_add_days_leap():
    assert add_days((2024, 2, 28), 1) == (2024, 2, 29)


def test_days_in_year():
    assert days_in_year(2024) == 366
    assert days_in_year(2023) == 365
