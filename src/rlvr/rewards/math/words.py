"""English number words as the number they name: "twelve" is 12, "one hundred and five" 105.

GSM8K-style and word-problem replies state a final answer in words ("The answer is four.").
`number_word_value` reads a whole answer that is only number words, in the grammar of English
cardinals up to the billions; anything else (a word that is not a number word, a scale word
twice in a row, "twelve apples") gives None, so text answers are never read as numbers:

    number  := ("minus" | "negative")? group (scale group?)*
    group   := ("a" | small)? "hundred"? ("and"? small)?   small: 0-99, "twenty-one" / "twenty one"
    scale   := "thousand" | "million" | "billion"           (each scale smaller than the last)
"""

from __future__ import annotations

import re

_UNITS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
).split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
SMALL = {word: n for n, word in enumerate(_UNITS)} | {w: 10 * (n + 2) for n, w in enumerate(_TENS)}
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9}
_WORDS = set(SMALL) | set(_SCALES) | {"hundred", "and", "a", "minus", "negative"}
_SPLIT = re.compile(r"[\s\-]+")


def _group(words: list[str]) -> int | None:
    """A number below 1000 from its words: "three hundred and two" -> 302, "a hundred" -> 100."""
    value, seen_small, seen_hundred = 0, False, False
    for i, word in enumerate(words):
        if word == "hundred":
            if seen_hundred or value >= 10 or (value == 0 and i > 0 and words[i - 1] != "a"):
                return None  # "twenty hundred", "hundred hundred"
            value, seen_hundred, seen_small = max(value, 1) * 100, True, False
        elif word in SMALL:
            n = SMALL[word]
            if seen_small and not (value % 100 >= 20 and value % 10 == 0 and 0 < n < 10):
                return None  # "twelve three", "five twenty"; only "twenty" + "one" combine
            value, seen_small = value + n, True
        elif word == "a" and i == 0:
            continue
        elif word == "and" and seen_hundred and i + 1 < len(words):
            continue
        else:
            return None
    return value if (seen_small or seen_hundred) else None


def number_word_value(text: str) -> int | None:
    """The integer a whole answer of number words names ("Twenty-one." -> 21), else None."""
    words = [w for w in _SPLIT.split(text.strip().rstrip(".!").lower()) if w]
    if not words or not set(words) <= _WORDS:
        return None
    sign = -1 if words[0] in ("minus", "negative") else 1
    words = words[1:] if sign < 0 else words
    total, group, last_scale = 0, [], None
    for word in words + ["<end>"]:
        if word in _SCALES or word == "<end>":
            scale = _SCALES.get(word, 1)
            if last_scale is not None and scale >= last_scale:
                return None  # "a thousand million" reads two ways; "five thousand thousand"
            if not group and word != "<end>":
                return None
            value = 1 if group == ["a"] and word in _SCALES else _group(group) if group else 0  # "a thousand"
            if value is None or (group and value == 0 and scale > 1):
                return None
            total, group, last_scale = total + value * scale, [], scale
        elif not (word == "and" and not group and total):  # "one thousand and five"
            group.append(word)
    return sign * total if words else None
