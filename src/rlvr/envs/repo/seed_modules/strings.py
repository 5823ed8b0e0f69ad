"""Small string functions."""


def is_palindrome(text):
    letters = [c.lower() for c in text if c.isalnum()]
    return letters == letters[::-1]


def caesar(text, shift=3):
    out = []
    for c in text:
        if c.isalpha() and c.islower():
            out.append(chr((ord(c) - ord("a") + shift) % 26 + ord("a")))
        elif c.isalpha():
            out.append(chr((ord(c) - ord("A") + shift) % 26 + ord("A")))
        else:
            out.append(c)
    return "".join(out)


def count_vowels(text):
    return sum(1 for c in text.lower() if c in "aeiou")


def run_length(text):
    """'aaab' -> [('a', 3), ('b', 1)]"""
    out = []
    for c in text:
        if out and out[-1][0] == c:
            out[-1] = (c, out[-1][1] + 1)
        else:
            out.append((c, 1))
    return out


def expand(runs):
    return "".join(c * n for c, n in runs)


def initials(name):
    return "".join(part[0].upper() for part in name.split() if part)
