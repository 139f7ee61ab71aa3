"""What a shown answer names that nothing given supports, checked apart from agent.voice.verify
(the benchmark and the end-to-end tests count with it, so the product's check is not its own
judge): a number, a path or file, or a name (a capitalised word after a sentence's first, a word
in capitals) that is in no item handed and not in the question."""

from __future__ import annotations

import re

_NAMED = re.compile(r"[\w./~-]+")


def sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?…])\s+|\n+", text) if s.strip()]


def invented(sentence: str, given: str) -> list[str]:
    """What ``sentence`` names that ``given`` (the items handed and the question) does not."""
    lowered = given.casefold()
    digits = set(re.findall(r"\d+", given))
    out = [n for n in re.findall(r"\d+", sentence) if n not in digits]
    tokens = _NAMED.findall(sentence)
    for i, token in enumerate(tokens):
        token = token.strip(".-")
        if not token or token.isdigit():
            continue
        path = "/" in token or re.fullmatch(r"[\w-]+\.[A-Za-z]\w{0,5}", token)
        name = (i > 0 and token[0].isupper()) or (len(token) > 1 and token.isupper())
        if (path or name) and token.casefold() not in lowered:
            out.append(token)
    return out


def invented_in(text: str, given: str) -> list[tuple[str, list[str]]]:
    """Each sentence of ``text`` that names something ``given`` does not, with what it names."""
    found = [(s, invented(s, given)) for s in sentences(text)]
    return [(s, names) for s, names in found if names]
