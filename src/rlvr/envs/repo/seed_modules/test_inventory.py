import pytest

from inventory import add_item, low_stock, most_valuable, remove_item, total_value


def test_add_new():
    assert add_item({}, "pen", 3, 2) == {"pen": (3, 2)}


def test_add_existing_keeps_price():
    assert add_item({"pen": (3, 2)}, "pen", 2) == {"pen": (5, 2)}


def test_add_default_count():
    assert add_item({}, "cup", price=4) == {"cup": (1, 4)}


def test_remove_some():
    assert remove_item({"pen": (3, 2)}, "pen", 2) == {"pen": (1, 2)}


def test_remove_all():
    assert remove_item({"pen": (3, 2)}, "pen", 3) == {}


def test_remove_too_many():
    with pytest.raises(ValueError):
        remove_item({"pen": (1, 2)}, "pen", 2)


def test_remove_missing():
    with pytest.raises(KeyError):
        remove_item({}, "pen")


def test_total_value():
    assert total_value({"pen": (3, 2), "cup": (1, 5)}) == 11


def test_low_stock():
    assert low_stock({"pen": (1, 2), "cup": (2, 5), "ink": (0, 1)}) == ["ink", "pen"]


def test_most_valuable():
    assert most_valuable({"pen": (3, 2), "cup": (1, 5)}) == "pen"
    assert most_valuable({}) is None
