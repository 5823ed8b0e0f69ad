"""Unicode maths as the LaTeX the rest of the verifier reads: "2½" is "2\\frac{1}{2}".

Models and people type answers with the characters of a phone keyboard or a word processor:
vulgar fractions, superscript exponents, the minus sign U+2212, "√", "∞", "∪", "∅", "×", "π".
`unicode_to_latex` rewrites each of them, everywhere in a reply, before any extractor reads
it, so every later rule (numbers, roots, intervals, sets, scientific notation) applies
unchanged. One pass of `str.translate` and three linear regexes; text without such a
character is returned as it is.
"""

from __future__ import annotations

import re
import unicodedata

# Superscripts and subscripts: "10²³" is "10^{23}", "x⁻¹" is "x^{-1}", "a₁₀" is "a_{10}".
_SUPERSCRIPT = "⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺"
_SUBSCRIPT = "₀₁₂₃₄₅₆₇₈₉₋₊"
_PLAIN = "0123456789-+"
_SCRIPT_RUN = re.compile(f"([{_SUPERSCRIPT}]+)|([{_SUBSCRIPT}]+)")
_SCRIPT_DIGITS = str.maketrans(_SUPERSCRIPT + _SUBSCRIPT, _PLAIN + _PLAIN)

# Symbols with one LaTeX spelling each. A trailing space keeps "\\times" off the next letter.
_SYMBOLS = {
    "−": "-", "–": "-", "‐": "-", "‑": "-", "⁄": "/", "∕": "/",
    "×": "\\times ", "⋅": "\\cdot ", "·": "\\cdot ", "∙": "\\cdot ", "÷": "\\div ",
    "∞": "\\infty ", "∪": "\\cup ", "∩": "\\cap ", "∅": "\\emptyset ", "∈": "\\in ",
    "≤": "\\le ", "≥": "\\ge ", "≠": "\\ne ", "≈": "\\approx ", "±": "\\pm ", "∓": "\\mp ",
    "π": "\\pi ", "θ": "\\theta ", "°": "^\\circ ", "ℝ": "\\mathbb{R}", "⟨": "\\langle ", "⟩": "\\rangle ", "\u00a0": " ",
    "\u2009": " ", "\u202f": " ",
}
# Every vulgar fraction of Unicode (½ ⅓ ⅔ ¼ ¾ ⅕ ... ⅞ ↉), read from its name, not listed by hand.
_VULGAR = {
    char: unicodedata.numeric(char)
    for char in map(chr, range(0x00BC, 0x2190))
    if unicodedata.name(char, "").startswith("VULGAR FRACTION")
}
# A root sign takes what follows it: a number ("√3"), a letter ("√x") or a bracket ("√(x+1)").
_ROOT = re.compile(r"√\s*(?:(\d+(?:\.\d+)?|[a-zA-Z])|\(([^()]*)\)|\{([^{}]*)\})")
# Full-width forms (CJK input: "３", "＝", "："), U+FF01-FF5E, are their ASCII characters.
_FULL_WIDTH = {chr(code): chr(code - 0xFEE0) for code in range(0xFF01, 0xFF5F)} | {"\u3000": " "}
_SYMBOLS |= _FULL_WIDTH
_TRIGGERS = set(_SYMBOLS) | set(_VULGAR) | set(_SUPERSCRIPT + _SUBSCRIPT) | {"√"}
# "＜answer＞" is a look-alike of a tag, not one: its brackets become "(" ")", so that no
# template-free reading finds a tag that a template (which reads the raw text) would not.
_LOOKALIKE_BRACKETS = str.maketrans("＜＞", "()")
_LOOKALIKE_TAG = re.compile(r"[＜<]\s*/?\s*(?:answer|think)\b[^＜＞<>]{0,80}[＞>]", re.IGNORECASE)


def _vulgar_latex(char: str) -> str:
    """"½" -> "\\frac{1}{2}", from the character's decomposition ("1⁄2"), so "⅞" needs no table."""
    numerator, _, denominator = unicodedata.normalize("NFKD", char).partition("\u2044")
    return f"\\frac{{{numerator}}}{{{denominator}}}"


def _script(match: re.Match) -> str:
    run = match[0].translate(_SCRIPT_DIGITS)
    return f"^{{{run}}}" if match[1] else f"_{{{run}}}"


def unicode_to_latex(text: str) -> str:
    """Rewrite Unicode maths as LaTeX; see the module docstring. "−½" -> "-\\frac{1}{2}"."""
    if text.isascii() or not _TRIGGERS.intersection(text):
        return text
    if "＜" in text or "＞" in text:
        text = _LOOKALIKE_TAG.sub(lambda m: m[0].translate(_LOOKALIKE_BRACKETS), text)
    for char in _VULGAR:
        if char in text:
            text = text.replace(char, _vulgar_latex(char))
    text = text.translate(str.maketrans(_SYMBOLS))
    text = _SCRIPT_RUN.sub(_script, text)
    return _ROOT.sub(lambda m: "\\sqrt{" + (m[1] or m[2] or m[3] or "").strip() + "}", text)
