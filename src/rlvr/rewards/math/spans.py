"""Answers that are not in a box: a whole reply that is the answer, or its final maths span.

Both are extractors (see `math/extract.py` for the order they are tried in). Every regex here
is linear in the text's length; replies are bounded by the verifier's `max_chars`.
"""

from __future__ import annotations

import re

# A sentence that ends in "?" restates the question; its numbers are not answers.
# Matching starts only at a sentence start, so the scan stays linear in the text's length.
_QUESTION = re.compile(r"(?:(?<=[.?!\n])|^)(?:[^.?!\n]|\.(?=\d))*\?")
# A sentence that restates the task ("The question asks for ...") states no answer either.
_RESTATED = re.compile(
    r"(?:(?<=[.?!\n])|^)[^.?!\n]*\b(?:question|problem|task) (?:asks|is asking|wants)\b"
    r"(?:[^.?!\n]|\.(?=\d))*",
    re.IGNORECASE,
)
# A restated given ("We are told the area is 36, ...") states no answer either: blanked
# to the end of its clause.
_GIVEN = re.compile(
    r"\b(?:we are|we're|i am|i'm) (?:told|given)\b(?:[^.?!,;\n]|\.(?=\d))*?"
    r"(?=\s+and\s+(?:asked|need|want)|[.?!,;\n]|$)|\bgiven that\b(?:[^.?!,;\n]|\.(?=\d))*",
    re.IGNORECASE,
)
# The reason after a final span is not part of the statement: "..., since there are 36".
_AFTER_REASON = re.compile(r"^\s*[,;]?\s*(?:since|because|as|given|where)\b(?:[^.!\n]|\.(?=\d))*")
_WHOLE_MAX_CHARS = 600
_DELIMITED = [
    re.compile(r"\$\$(.+)\$\$", re.DOTALL),
    re.compile(r"\$([^$]+)\$", re.DOTALL),
    re.compile(r"\\\((.+)\\\)", re.DOTALL),
    re.compile(r"\\\[(.+)\\\]", re.DOTALL),
]
# "\\$5" is a price, not a delimiter.
_SPAN = re.compile(
    r"(?<!\\)\$\$(?P<a>[^$]{1,2000})(?<!\\)\$\$|(?<!\\)\$(?P<b>[^$]{1,2000}?)(?<!\\)\$"
    r"|\\\((?P<c>.{1,2000}?)\\\)|\\\[(?P<d>.{1,2000}?)\\\]",
    re.DOTALL,
)
# What a whole-reply answer may contain besides maths: at most a few plain words, and only
# when it has no digits ("Monday", "no solution"), or the words of a list ("2 or 3").
_WORD = re.compile(r"(?<![\\a-zA-Z])[a-zA-Z]{2,}")
_MATH_WORDS = {
    "sin", "cos", "tan", "cot", "sec", "csc", "log", "ln", "exp", "sqrt", "pi", "inf",
    "infty", "and", "or", "mod", "arcsin", "arccos", "arctan", "max", "min", "gcd", "lcm",
}
_LATEX_WORDS = re.compile(
    r"\\(?:text|mathrm|textbf|mbox|operatorname|begin|end)\s*\{[^{}]*\}|\\[a-zA-Z]+"
)
# Between the spans of an answer written as several spans ("$1$ and $2$"): connectors only.
_CONNECTORS = re.compile(r"(?:\s|,|;|\band\b|\bor\b)*")
_MAX_WORDS = 4
_FOREIGN = re.compile(r"[#@~\"?`]|(?<![a-zA-Z])'|[a-zA-Z]\d+[a-zA-Z]|\d[a-df-zA-DF-Z]\d")
_SHORT_WORDS = {"is", "be", "we", "so", "it", "at", "to", "of", "in", "on", "by", "an", "as", "if", "no"}
_TRAILER = re.compile(r"[\s.]*$")
# A linking verb: the words before it name the answer, the maths after it is the answer.
_STATEMENT = re.compile(r"\s(?:is|are|equals|was)\s+(?=\S)", re.IGNORECASE)


# A remark that restates the question after the answer: "(The question was: ... find x.)".
_QUESTION_REMARK = re.compile(
    r"\((?:the )?(?:original )?(?:question|problem|task) (?:was|is|asks|asked|reads|read)\b[^()]{0,400}\)",
    re.IGNORECASE,
)


_WORKING = re.compile(r"[^:]*=[^:]*:\s+-?[\d.,/]+")
# Replies that say they have no answer; a few plain words are otherwise read as one ("Monday").
_ABSTENTION = re.compile(
    r"(?:i\s+)?(?:(?:do\s*n[o']?t|dunno|have no|got no|no)\s*(?:know|idea|clue)|(?:am |'m )?(?:not sure|unsure)|"
    r"idk|unknown|no answer|(?:can'?t|cannot) (?:say|tell|solve (?:it|this))|(?:i )?give up|pass)[\s.!]*",
    re.IGNORECASE,
)


def without_questions(text: str) -> str:
    """Blank out questions and restated tasks, keeping every other character where it was."""
    blank = lambda match: " " * len(match[0])  # noqa: E731 - keeps every position
    if "(" in text and ("uestion" in text or "roblem" in text or "ask" in text):
        text = _QUESTION_REMARK.sub(blank, text)
    if "?" in text:
        text = _QUESTION.sub(blank, text)
    if "ask" in text or "want" in text:
        text = _RESTATED.sub(blank, text)
    if "given" in text or "told" in text:
        text = _GIVEN.sub(blank, text)
    return text


def without_question_sentences(text: str) -> str:
    """Blank out only the sentences that end in "?" (and "(The question was: ...)" remarks),
    positions kept: where a box or tag is read, a restated task ("the question asks for the
    area: $\\boxed{40}$") may hold the answer itself."""
    blank = lambda match: " " * len(match[0])  # noqa: E731 - keeps every position
    if "(" in text and ("uestion" in text or "roblem" in text or "ask" in text):
        text = _QUESTION_REMARK.sub(blank, text)
    return _QUESTION.sub(blank, text) if "?" in text else text


def _delimited(text: str) -> str | None:
    """The inside of `text` when all of it is one `$...$`, `$$...$$`, `\\(...\\)`, `\\[...\\]`."""
    for pattern in _DELIMITED:
        if match := pattern.fullmatch(text):
            return match[1].strip()
    return None


def extract_whole(text: str) -> str | None:
    """The reply itself when it is only an answer: bare LaTeX, one maths span, a few words.

    "\\frac13", "$x \\le 3$", "\\begin{pmatrix}1\\\\2\\end{pmatrix}", "(-\\infty, 2]",
    "Monday"; not prose ("So we get 42"), not a question, not over 600 characters.
    """
    text = _TRAILER.sub("", text.strip())
    if not text or len(text) > _WHOLE_MAX_CHARS or text.endswith("?") or _ABSTENTION.fullmatch(text):
        return None  # "I don't know" states no answer: it abstains (maj@k), it does not vote
    if _WORKING.fullmatch(text):
        return None  # "9*9=80+1: 81": a working, then the answer (`math_span` reads it)
    inner = _delimited(text)
    if inner is not None:
        return inner or None
    if "$" in text or "\\(" in text or "\\[" in text:
        return _joined_spans(text)
    if _STATEMENT.search(text) and re.search(r"[\d\\]", text):
        return None  # "The solution set is \\emptyset": a sentence, for `math_span` to read
    return text if few_words(text) and _well_formed(text) else None


def _well_formed(text: str) -> bool:
    """No characters foreign to an answer, brackets that pair up: not digit soup."""
    if _FOREIGN.search(text):
        return False
    opened = text.count("(") + text.count("[")
    return opened == text.count(")") + text.count("]") and text.count("{") == text.count("}")


def few_words(text: str) -> bool:
    """True for maths with at most a few plain words: "Monday", "5 cm", "b^2-4ac", not
    "So we get 42" (words with a number are prose, unless they are two-letter units)."""
    words = [w for w in _WORD.findall(_LATEX_WORDS.sub(" ", text)) if w.lower() not in _MATH_WORDS]
    if len(words) > _MAX_WORDS:
        return False
    prose = [w for w in words if len(w) > 2 or w.lower() in _SHORT_WORDS]
    return not (prose and re.search(r"\d", text))


def _joined_spans(text: str) -> str | None:
    """"$1$ and $2$ and $3$" -> "1 and 2 and 3": spans with only connectors between them."""
    spans = list(_SPAN.finditer(text))
    if not spans:
        return None
    pieces, at = [], 0
    for span in spans:
        if not _CONNECTORS.fullmatch(text, at, span.start()):
            return None
        pieces += [text[at : span.start()], _inside(span)]
        at = span.end()
    if not _CONNECTORS.fullmatch(text, at):
        return None
    return " ".join("".join(pieces).split()) or None


def extract_math_span(text: str) -> str | None:
    """The last maths span, when it belongs to the reply's final statement.

    "... Thus $x = 5$." gives "x = 5"; a span followed by more numbers or further sentences
    ("$x^2=25$, so x = 5") is left to the last-number extractor. Spans inside questions are
    skipped, and a lone variable ("... the value of $x$") is not an answer.
    """
    text = without_questions(text)
    if "$" not in text and "\\(" not in text and "\\[" not in text:
        return _plain_final(text)
    spans = [m for m in _SPAN.finditer(text) if (m["a"] or m["b"] or m["c"] or m["d"]).strip()]
    while spans and re.fullmatch(r"\s*[a-zA-Z]\s*", _inside(spans[-1])):
        spans.pop()
    if not spans:
        return _plain_final(text)
    after = _AFTER_REASON.sub("", text[spans[-1].end() :])
    if re.search(r"\d|[.!\n]\s*[A-Za-z]", after) or len(after.strip()) > 60:
        return _plain_final(text[spans[-1].end() :])
    last = len(spans) - 1
    while last > 0 and _CONNECTORS.fullmatch(text, spans[last - 1].end(), spans[last].start()):
        last -= 1  # "$x = 2$ and $x = -3$": one answer in several spans
    return ", ".join(_inside(span).strip() for span in spans[last:])


# The final statement of a reply written without delimiters: after its last sentence end.
_LAST_SENTENCE = re.compile(r"(?:^|[.!?:](?=\s)|\n)(?P<s>(?:[^.!?:\n]|\.(?=\d)|:(?=\S))*?)[\s.]*$")
# Where a plain equation starts: a one-letter name, "x =" or "a_1 =", not "2x =" nor "\\alpha".
_EQUATION_START = re.compile(r"(?<![\w\\])[a-zA-Z](?:_\{?\w+\}?)?\s*=(?!=)")
_LABEL = re.compile(r"\n?[^\n:]{1,80}:[ \t]+(?P<a>[^\n]+?)[\s.]*$")


def _plain_final(text: str) -> str | None:
    """The answer a final statement without `$` states in plain maths, else None.

    Its last line "Label: answer" gives the answer when that is maths on its own ("Domain:
    (-\\infty, 0)", "... is the identity: [[1, 0], [0, 1]]"); its last sentence gives the
    LaTeX after its last "is" ("so the solution set is \\emptyset") or the equations it ends in
    ("So x = 3 or x = -3"). A sentence with prose after the maths ("x = 5 is too big") is left
    to the last-number extractor.
    """
    if (label := _LABEL.search(text[-600:])) and (whole := extract_whole(label["a"])):
        if re.search(r"[\d\\]", whole) and not _prose_words(whole):
            return whole
    sentence = _LAST_SENTENCE.search(text[-600:])
    if sentence is None:
        return None
    stated = list(_STATEMENT.finditer(sentence["s"]))
    if stated and (tail := sentence["s"][stated[-1].end() :].strip()):
        # LaTeX only ("so the solution set is \\emptyset"): a plain number, with its unit
        # ("5 m/s"), is the last-number extractor's
        if "\\" in tail and not _prose_words(tail) and _well_formed(tail):
            return tail
    for start in _EQUATION_START.finditer(sentence["s"]):
        tail = sentence["s"][start.start() :].strip()
        if not _prose_words(tail) and _well_formed(tail):
            return tail
    return None


def _prose_words(text: str) -> set[str]:
    """The words of `text` that are not maths ("or", "and", "sin" are; LaTeX commands go)."""
    return {w.lower() for w in _WORD.findall(_LATEX_WORDS.sub(" ", text))} - _MATH_WORDS


def _inside(match: re.Match) -> str:
    return match["a"] or match["b"] or match["c"] or match["d"] or ""
