from strings import caesar, count_vowels, expand, initials, is_palindrome, run_length


def test_palindrome():
    assert is_palindrome("A man, a plan, a canal: Panama")


def test_not_palindrome():
    assert not is_palindrome("hello")


def test_caesar():
    assert caesar("abc", 1) == "bcd"


def test_caesar_wraps_and_keeps_case():
    assert caesar("xyz XYZ!", 3) == "abc ABC!"


def test_caesar_default():
    assert caesar("a") == "d"


def test_count_vowels():
    assert count_vowels("Programming") == 3


def test_run_length():
    assert run_length("aaabcc") == [("a", 3), ("b", 1), ("c", 2)]


def test_expand():
    assert expand([("x", 2), ("y", 1)]) == "xxy"


def test_initials():
    assert initials("ada  lovelace byron") == "ALB"
