"""Breaking text into lines of a given width."""


def wrap(text, width=10):
    """Greedy wrap: as many words per line as fit in `width` characters."""
    lines, current = [], ""
    for word in text.split():
        if not current:
            current = word
        elif len(current) + 1 + len(word) <= width:
            current = current + " " + word
        else:
            lines.append(current)
            current = word
    if current:
        lines.append(current)
    return lines


def truncate(text, width, marker="..."):
    if len(text) <= width:
        return text
    return text[: width - len(marker)] + marker


def pad_center(text, width):
    space = width - len(text)
    if space <= 0:
        return text
    left = space // 2
    return " " * left + text + " " * (space - left)


def count_lines(text, width=10):
    return len(wrap(text, width))
