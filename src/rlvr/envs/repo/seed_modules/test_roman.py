import pytest

from roman import from_roman, is_roman, to_roman


def test_small():
    assert to_roman(3) == "III"


def test_subtractive():
    assert to_roman(4) == "IV"
    assert to_roman(9) == "IX"


def test_large():
    assert to_roman(1994) == "MCMXCIV"


def test_max():
    assert to_roman(3999) == "MMMCMXCIX"


def test_out_of_range():
    with pytest.raises(ValueError):
        to_roman(0)
    with pytest.raises(ValueError):
        to_roman(4000)


def test_from_roman():
    assert from_roman("XLII") == 42


def test_from_roman_subtractive():
    assert from_roman("MCMXCIV") == 1994


def test_round_trip():
    assert all(from_roman(to_roman(n)) == n for n in range(1, 300))


def test_is_roman():
    assert is_roman("XIV")
    assert not is_roman("IIII")
    assert not is_roman("")
