"""Normalise maths answers before comparing them: the forms bare math-verify misjudges.

Everything here is pure string and `Fraction` work, linear in the answer's length, so it needs
no time limit. Applied to both sides (response and gold):

- plain numbers as `Fraction`: "0.50", "3/4", "-3", LaTeX `\\frac{3}{4}`, `\\dfrac34`;
- thousands separators: "1,234", "1 234", "1\\,234", "1{,}234" (groups of exactly 3 digits);
- mixed numbers: "2 1/2", "2\\frac{1}{2}" are 5/2 ("-2 1/2" is -5/2);
- repeating decimals: "0.\\overline{3}", "0.(3)", "0.1\\overline{6}" are 1/3, 1/3, 1/6;
- currency and units: "$5.00", "\\$5", "5 dollars", "USD 5", "5\\text{ cm}" are 5;
- percentages: `split_percent` separates "50\\%" / "50 percent" into (50, True);
- multiple-choice letters: "(B)", "B)", "\\text{(B)}", "b." are "B" (`choice_letter`);
- hedges: `top_level_items` splits "19 or 20", "1, 2, 19" into several answers;
- Unicode maths ("2½", "10²³", "√3": `unicode`), number words ("twelve": `words`),
  scientific notation ("3.2e5", "3.2 \\times 10^{5}", exactly), "all real numbers", the
  empty set's spellings, "\\langle 1, 2 \\rangle" and nested lists "[[1, 0], [0, 1]]".
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

from rlvr.rewards.math.unicode import unicode_to_latex
from rlvr.rewards.math.words import number_word_value

_DECIMAL = re.compile(r"-?\d+(?:\.\d+)?")
_FRACTION = re.compile(r"(-?\d+(?:\.\d+)?)/(-?\d+(?:\.\d+)?)")
_MIXED = re.compile(r"(-?)(\d+)\s+(\d+)/(\d+)")
_LATEX_FRAC = re.compile(r"\\[dt]?frac\s*(?:\{\s*(-?\d+)\s*\}|(\d))\s*(?:\{\s*(-?\d+)\s*\}|(\d))")
_THOUSANDS = re.compile(r"-?\d{1,3}(?:(?:,|\{,\}|\\,|\\ |\\;| )\d{3})+(?:\.\d+)?")
_REPEATING = re.compile(r"(-?)(\d+)\.(\d*)(?:\\overline\s*\{(\d+)\}|\\dot\s*\{?(\d)\}?|\((\d+)\))")
_CURRENCY = re.compile(
    r"\\\$|\$|€|£|\\euro|\\pounds|\b(?:USD|EUR|GBP|dollars?|cents?|euros?|pounds?|rupees?)\b",
    re.IGNORECASE,
)
_TEXT = re.compile(r"\\(?:text|textbf|mathrm|mbox)\s*\{([^{}]*)\}")
_LATEX_NOISE = re.compile(r"\\(?:left|right|displaystyle|!|;|:)|\\,(?!\d{3})")
# Degrees are dropped, never converted: "90^\circ" is 90, not pi/2.
_DEGREES = re.compile(r"\s*(?:\^\s*\{?\s*\\circ\s*\}?|°|\\degree\b)")
# A whole answer in markdown bold or italics ("**Yes**", "*12*", "__x = 2__").
_MARKDOWN = re.compile(r"(\*\*|__|\*)(?P<inner>[^*_\s](?:[^*]*[^*_\s])?)\1")
_LEADING_DOT = re.compile(r"(?<![\d.])\.(?=\d)")
_DELIMITERS = re.compile(r"^\s*(?:\$\$|\$|\\\(|\\\[)(.*?)(?:\$\$|\$|\\\)|\\\])\s*$", re.DOTALL)
_SPACING = re.compile(r"\\(?:displaystyle|left|right|big|Big|bigl|bigr|Bigl|Bigr)(?![a-zA-Z])|\\[!;:]|~")
_SINGLE_LETTER = re.compile(r"\\(?:mathrm|mathit|text)\s*\{\s*([a-zA-Z])\s*\}")
_RELATION_ASCII = re.compile(r"<=|>=|=<|=>|!=")
_RELATION_LATEX = {"<=": "\\le ", ">=": "\\ge ", "=<": "\\le ", "=>": "\\ge ", "!=": "\\ne "}
_FRAC_STYLE = re.compile(r"\\[dt]frac")
_MATRIX_STYLE = re.compile(r"\\(begin|end)\{[bB]matrix\}")
# Unit words after a number ("5 cm", "12 apples"); a single letter ("3 x") and maths words
# ("2 pi") are not units.
_UNIT_TAIL = re.compile(
    r"(?<=[\d}])(?:\s*(?:\^\s*\{?\s*\\circ\s*\}?|°)"
    r"|(?:\s+(?!(?:pi|sqrt|log|ln|sin|cos|tan|exp|inf|infty|mod)\b)[a-zA-Z]{2,}\.?)+"
    r"(?:\s*\^\s*\{?\s*[23]\s*\}?|/[a-zA-Z]{1,3})?"  # "cm^2", "m/s"
    r"|\s*(?:[kcm]?m|in|ft|yd)\s*\^\s*\{?\s*[23]\s*\}?)$"  # "5m²" typed: "5m^{2}"
)
_PERCENT = re.compile(r"\s*(?:\\%|%|\s+percent|\\text\{\s*percent\s*\})\s*$")
_CHOICE = re.compile(r"(?:(?:option|choice)\s+)?\(?\s*([A-Ja-j])\s*(?:\)|\.|:)?", re.IGNORECASE)
_CHOICE_GOLD = re.compile(r"\(?\s*([A-J])\s*\)?")
# Scientific notation, exactly: "3.2e5", "6.02 \\times 10^{23}", "1.5 \\cdot 10^{-3}". The
# exponent has at most 3 digits; longer ones are `too_large`'s to refuse, unread.
_SCIENTIFIC = re.compile(
    r"(-?\d+(?:\.\d+)?)\s*(?:[eE]([+-]?\d{1,3})|(?:\\times|\\cdot|\*)\s*10\s*\^\s*(?:\{\s*([+-]?\d{1,3})\s*\}|(\d)))"
)
# "3.2e5" as LaTeX, so that every later reading agrees (the value reader would take "e" for
# Euler's number); a 4+ digit exponent is left for `too_large` to refuse.
_E_NOTATION = re.compile(r"(?<![\w.\\])(\d+(?:\.\d+)?)[eE]([+-]?\d{1,3})(?![\w.])")
# The whole real line, in words or as a set: "all real numbers", "\\mathbb{R}". Nothing may
# follow: "all real numbers except 0" is another set.
_ALL_REALS = re.compile(
    r"(?:(?:the\s+)?set\s+of\s+)?(?:all|every)\s+real(?:\s+numbers?|s)?(?:\s+[a-z])?|\\mathbb\s*\{?\s*R\s*\}?",
    re.IGNORECASE,
)
_REALS_TOKEN = re.compile(r"\\mathbb\s*\{\s*R\s*\}(?!\s*[\^_])|\\mathbb\s+R\b(?!\s*[\^_])")
_EMPTY_SET = re.compile(r"\\varnothing|\\emptyset|\\\{\s*\\\}")
_ANGLE = re.compile(r"\\langle(.*)\\rangle")
# Thin spaces inside one option ("\\textbf{(C)}\\ 14"); a "\\qquad" separates options, so stays.
_OPTION_SPACING = re.compile(r"\\[ ,;:!]|~")
_HEDGE_WORDS = re.compile(
    r"\s+(?:or|and)\s+|\\text\{\s*(?:or|and)\s*\}|\\(?:quad|qquad)|(?<=[)\]}])\s*(?:or|and)\s*(?=[(\[{])"
)


# A short unit in a wrapper after the value: "3.98 \\times 10^{-19} \\mathrm{J}", "5\\,\\text{m}";
# not "i" or "e", which are numbers.
_WRAPPED_UNIT = re.compile(r"(?<=[\d}])\s*\\(?:mathrm|text|mbox)\s*\{\s*(?![ie]\s*\})[A-Za-z]{1,3}\s*\}\s*$")


def _strip_decoration(text: str) -> str:
    """Drop `$` delimiters, currency, `\\text{}` wrappers, LaTeX spacing and unit words."""
    text = _WRAPPED_UNIT.sub("", text)
    text = _TEXT.sub(r" \1 ", text)
    text = _CURRENCY.sub(" ", text)
    text = _LATEX_NOISE.sub("", text)
    text = text.strip().rstrip(".").strip()
    return _UNIT_TAIL.sub("", text).strip()


# `clean`, `to_fraction` and `top_level_items` are pure functions of one string and each is
# called several times per check on the same answer (comparison, hedge test, base test):
# cached, so the repeats cost a dictionary look-up. Results are immutable (str, Fraction,
# tuple), so a caller cannot change a cached value.
_CACHE = 16384


@lru_cache(maxsize=_CACHE)
def clean(text: str) -> str:
    """The common form both sides are compared in: no delimiters, spacing, degrees or
    currency; `\\dfrac` is `\\frac`, ".4" is "0.4", "11,\\!111" is "11,111", `bmatrix`
    is `pmatrix`; no trailing full stop. Unit words are left to `to_fraction`."""
    text = unicode_to_latex(text).strip()
    if (text[:1] in "*_") and (bold := _MARKDOWN.fullmatch(text)):
        text = bold["inner"]
    while (match := _DELIMITERS.fullmatch(text)) and match[1].strip() and "$" not in match[1]:
        text = match[1].strip()
    text = re.sub(r",\s*\\!\s*(?=\d{3})", ",", text)  # "11,\\! 111" groups thousands
    text = re.sub(r"(?<!\\)\\ ", " ", _SPACING.sub("", text))
    text = _WRAPPED_UNIT.sub("", text) if "\\" in text else text  # before "\\mathrm{J}" is "J"
    text = _SINGLE_LETTER.sub(r"\1", text)
    text = _RELATION_ASCII.sub(lambda m: _RELATION_LATEX[m[0]], text)
    text = _FRAC_STYLE.sub(r"\\frac", text)
    text = _MATRIX_STYLE.sub(r"\\\1{pmatrix}", text)
    text = _DEGREES.sub("", text)
    text = re.sub(r"([_^])\{\s*(\w)\s*\}", r"\1\2", text)  # "x^{2}" is "x^2", "a_{3}" is "a_3"
    text = _CURRENCY.sub(" ", text) if re.search(r"\d", text) else text
    text = _LEADING_DOT.sub("0.", text)
    text = _E_NOTATION.sub(r"\1 \\times 10^{\2}", text) if "e" in text.lower() else text
    text = re.sub(r"\\,(?!\d{3}(?!\d))", " ", text)
    text = " ".join(text.split()).rstrip(".").strip()
    while len(text) > 2 and text[0] == "{" and text[-1] == "}" and _one_group(text):
        text = text[1:-1].strip()
    return plus_minus(_named_forms(text))


def _named_forms(text: str) -> str:
    """Answers written as words or set symbols, in the one form compared: "twelve" is "12",
    "all real numbers" and `\\mathbb{R}` are "(-\\infty, \\infty)", `\\varnothing` and `\\{\\}` are
    `\\emptyset`, a nested list "[[1, 0], [0, 1]]" is the `pmatrix` it writes row by row."""
    if (value := number_word_value(_TEXT.sub(r"\1", text))) is not None:
        return str(value)
    if _ALL_REALS.fullmatch(_TEXT.sub(r"\1", text).strip()):
        return "(-\\infty, \\infty)"
    if (angle := _ANGLE.fullmatch(text)) and "\\langle" not in angle[1]:
        return f"({angle[1].strip()})"  # the vector "\\langle 1, 5 \\rangle" is the tuple (1, 5)
    text = _REALS_TOKEN.sub(r"(-\\infty, \\infty)", text) if "mathbb" in text else text
    text = _EMPTY_SET.sub(r"\\emptyset", text) if "\\" in text else text
    return nested_list_matrix(text) or text


def nested_list_matrix(text: str) -> str | None:
    """"[[1, 0], [0, 1]]" -> the `pmatrix` with those rows; None unless every row is a
    bracketed list of the same length (at least two rows, or one row of two or more)."""
    if not (text.startswith("[") and text.endswith("]") and text[1:].lstrip().startswith("[")):
        return None
    rows = top_level_items(text[1:-1])
    if not rows or not all(row.startswith("[") and row.endswith("]") for row in rows):
        return None
    cells = [top_level_items(row[1:-1]) for row in rows]
    if len({len(row) for row in cells}) != 1 or len(cells) * len(cells[0]) < 2:
        return None
    if any("[" in cell or "]" in cell for row in cells for cell in row):
        return None
    body = " \\\\ ".join(" & ".join(row) for row in cells)
    return f"\\begin{{pmatrix}}{body}\\end{{pmatrix}}"


def plus_minus(text: str) -> str:
    """"\\pm 2" -> "-2, 2" and "1 \\pm \\sqrt{2}" -> "1-\\sqrt{2}, 1+\\sqrt{2}": both values."""
    if text.count("\\pm") != 1 or "," in text or "=" in text:
        return text
    left, right = (part.strip() for part in text.split("\\pm"))
    if not right:
        return text
    return f"{left}-{right}, {left}+{right}" if left else f"-{right}, {right}"


def _one_group(text: str) -> bool:
    """True when the brace opening `text` closes at its very end ("{1,2}", not "{a}{b}")."""
    depth = 0
    for i, char in enumerate(text):
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth == 0 and i < len(text) - 1:
            return False
    return True


def split_percent(text: str) -> tuple[str, bool]:
    """("50\\%", ...) -> ("50", True); text without a trailing percent sign is unchanged."""
    plain = _TEXT.sub(r" \1 ", text).strip().strip("$").strip()
    body = _PERCENT.sub("", plain)
    return (body, True) if body != plain else (text, False)


def _repeating_value(match: re.Match) -> Fraction:
    """a.b(c) = a.b + c / (10^len(b) * (10^len(c) - 1)), e.g. 0.1(6) = 1/10 + 6/90 = 1/6."""
    sign, whole, fixed, *repeats = match.groups()
    repeat = next(r for r in repeats if r)
    value = Fraction(f"{whole}.{fixed}" if fixed else whole)
    value += Fraction(int(repeat), 10 ** len(fixed) * (10 ** len(repeat) - 1))
    return -value if sign else value


def _plain_fraction(text: str) -> Fraction | None:
    """Read "3", "-0.5", "3/4", "-3/4", "2 1/2" (mixed), else None."""
    try:
        if _DECIMAL.fullmatch(text):
            return Fraction(text)
        if match := _FRACTION.fullmatch(text):
            return Fraction(match[1]) / Fraction(match[2])
        if match := _MIXED.fullmatch(text):
            sign, whole, num, den = match.groups()
            if int(num) >= int(den):  # "2 3/2" is not a mixed number; leave it undecided
                return None
            value = int(whole) + Fraction(int(num), int(den))
            return -value if sign else value
    except ZeroDivisionError:
        return None
    except ValueError:  # over Python's int-from-string digit limit; math-verify decides
        return None
    return None


@lru_cache(maxsize=_CACHE)
def to_fraction(text: str) -> Fraction | None:
    """Read `text` as one exact number, after the normalisations in the module docstring.

    Returns None for anything that is not one plain number (expressions, sets, intervals,
    exponents, a zero denominator, a percentage: see `split_percent`).
    """
    text = _strip_decoration(text)
    if match := _REPEATING.fullmatch(text):
        return _repeating_value(match)
    if match := _SCIENTIFIC.fullmatch(text):
        mantissa, *exponents = match.groups()
        return Fraction(mantissa) * Fraction(10) ** int(next(e for e in exponents if e))
    if _THOUSANDS.fullmatch(text):
        text = re.sub(r"\{,\}|\\,|\\ |\\;|[, ]", "", text)
    negative = text.startswith("-")
    body = text[1:].strip() if negative else text
    whole, frac = None, body
    if match := re.fullmatch(r"(\d+)\s*(\\[dt]?frac.*)", body):  # 2\frac{1}{2}: mixed
        whole, frac = match[1], match[2]
    if latex := _LATEX_FRAC.fullmatch(frac):
        num, den = latex[1] or latex[2], latex[3] or latex[4]
        frac = f"{whole} {num}/{den}" if whole else f"{num}/{den}"
    elif whole:
        return None
    value = _plain_fraction(re.sub(r"\s*/\s*", "/", " ".join(frac.split())))
    if value is None:
        return None
    return -value if negative else value


def choice_letter(text: str) -> str | None:
    """The one multiple-choice letter `text` names ("(B)", "B)", "b.", "\\text{B}"), else None.

    Lower case is accepted here because only answer positions (a box, an answer tag, the words
    after "answer:") are passed in; a bare "a" in prose is never read as a choice.
    """
    text = option_text(text)
    match = _CHOICE.fullmatch(text) or re.fullmatch(r"\(?([A-J])\)\s.*", text, re.DOTALL)
    return match[1].upper() if match else None


def option_text(text: str) -> str:
    """A choice as plain text: "\\textbf{(C)}\\ 14" -> "(C)  14" (wrappers and LaTeX spaces out)."""
    return _OPTION_SPACING.sub(" ", _TEXT.sub(r"\1 ", text)).strip().strip("$").strip()


def is_choice_gold(gold: str) -> bool:
    """True when the gold answer is a single capital letter A-J, optionally in parentheses."""
    return _CHOICE_GOLD.fullmatch(_TEXT.sub(r"\1", gold.strip().strip("$")).strip()) is not None


# An AMC/AoPS answer-key gold: the option letter in parentheses, then its value,
# "\\textbf{(E) } 2\\sqrt{5}", "(D) 27". One option only: a second "(X)" is a list of options.
_OPTION_GOLD = re.compile(r"\(\s*([A-J])\s*\)\s*(?P<value>(?!\([A-J]\))\S(?:(?!\([A-J]\)).){0,80})", re.DOTALL)


@lru_cache(maxsize=_CACHE)
def choice_option(gold: str) -> tuple[str, str] | None:
    """(letter, value) for a gold that is one option with its value ("\\textbf{(E) } 2\\sqrt{5}"
    -> ("E", "2\\sqrt{5}")), else None."""
    if "(" not in gold:
        return None
    match = _OPTION_GOLD.fullmatch(option_text(gold))
    if match is None or not match["value"].strip():
        return None
    return match[1], match["value"].strip()


def top_level_items(text: str) -> list[str]:
    """Split on commas, "or", "and" outside brackets: "19 or 20" -> ["19", "20"].

    Thousands separators ("1,234") are not split. Used to spot hedged answers: several items
    against a single gold answer.
    """
    return list(_top_level_items(text))


@lru_cache(maxsize=_CACHE)
def _top_level_items(text: str) -> tuple[str, ...]:
    text = _HEDGE_WORDS.sub(" , ", text.strip().strip("$"))
    separator = ";" if _has_top_level(text, ";") else ","
    items, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == separator and depth == 0 and not re.match(r",\d{3}(?!\d)", text[i:]):
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return tuple(item.strip() for item in items if item.strip())


def _has_top_level(text: str, separator: str) -> bool:
    """True when `separator` occurs outside every bracket of `text`."""
    depth = 0
    for char in text:
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(char, 0)
        if char == separator and depth == 0:
            return True
    return False


_INTERVAL = re.compile(r"([\[(])([^,\[\]()]+),([^,\[\]()]+)([\])])")
_INFINITY = re.compile(r"(-|\+)?\s*\\infty|(-|\+)?\s*\\inf|(-|\+)?\s*∞")
_SURD = re.compile(r"(-?)\s*(\d+(?:\.\d+)?)?\s*\\sqrt\s*\{\s*(\d+(?:\.\d+)?)\s*\}")


def _endpoint(text: str) -> Fraction | str | None:
    """An interval endpoint: a plain number, "+inf" or "-inf", else None."""
    if match := _INFINITY.fullmatch(text.strip()):
        return "-inf" if "-" in (match[1] or match[2] or match[3] or "") else "+inf"
    return to_fraction(text)


def interval_parts(text: str) -> tuple | None:
    """"[1, 2)" -> ("[", 1, 2, ")"); a pair of plain numbers or infinities in brackets, else None.

    The same reading serves "(1, 2)" as an open interval or as a point: two such answers are
    equal under either reading exactly when their brackets and endpoints are.
    """
    text = re.sub(r"\\left|\\right|\$", "", text).strip()
    match = _INTERVAL.fullmatch(text)
    if match is None:
        return None
    low, high = _endpoint(match[2]), _endpoint(match[3])
    if low is None or high is None:
        return None
    return match[1], low, high, match[4]


def signed_square(text: str) -> tuple[int, Fraction] | None:
    """A real number whose square is rational, as (sign, square): "2\\sqrt{3}" -> (1, 12).

    Plain numbers count too ("-3" -> (-1, 9)), so "\\sqrt{4}" equals "2". None otherwise.
    """
    if match := _SURD.fullmatch(text.strip().strip("$").strip()):
        sign, coefficient, radicand = match.groups()
        square = Fraction(coefficient or 1) ** 2 * Fraction(radicand)
        return (0 if square == 0 else -1 if sign else 1), square
    value = to_fraction(text)
    if value is None:
        return None
    return (value > 0) - (value < 0), value * value
