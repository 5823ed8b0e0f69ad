"""Roman numerals from 1 to 3999."""

_VALUES = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
           (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]
_DIGITS = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


def to_roman(number):
    if number < 1 or number > 3999:
        raise ValueError("out of range")
    out = ""
    for value, letters in _VALUES:
        while number >= value:
            out += letters
            number -= value
    return out


def from_roman(text):
    total = 0
    for i, letter in enumerate(text):
        value = _DIGITS[letter]
        if i + 1 < len(text) and _DIGITS[text[i + 1]] > value:
            total -= value
        else:
            total += value
    return total


def is_roman(text):
    return bool(text) and all(c in _DIGITS for c in text) and to_roman(from_roman(text)) == text
