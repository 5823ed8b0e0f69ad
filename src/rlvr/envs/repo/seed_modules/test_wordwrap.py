from wordwrap import count_lines, pad_center, truncate, wrap


def test_wrap_fits():
    assert wrap("a bb ccc", 10) == ["a bb ccc"]


def test_wrap_breaks():
    assert wrap("aaa bbb ccc", 7) == ["aaa bbb", "ccc"]


def test_wrap_exact_width():
    assert wrap("ab cd", 5) == ["ab cd"]


def test_wrap_empty():
    assert wrap("", 5) == []


def test_wrap_default_width():
    assert wrap("one two three four") == ["one two", "three four"]


def test_truncate_short():
    assert truncate("hello", 10) == "hello"


def test_truncate_long():
    assert truncate("hello world", 8) == "hello..."


def test_truncate_marker():
    assert truncate("abcdef", 4, marker="~") == "abc~"


def test_pad_center():
    assert pad_center("ab", 6) == "  ab  "
    assert pad_center("ab", 5) == " ab  "


def test_pad_too_long():
    assert pad_center("abcdef", 3) == "abcdef"


def test_count_lines():
    assert count_lines("aaa bbb ccc", 7) == 2
