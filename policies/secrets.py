"""What looks like a secret in a person's text: the one owner of that judgement.

Used where text leaves the root (the training export): a turn holding a password, a PIN, a
card number (Luhn-checked), an IBAN (mod-97-checked) or an account number, an API key or token
(known prefixes, or a long high-entropy string) is withheld unless the person includes it.
The rules lean to catching: a value after a word such as "contraseña", "PIN" or "clave" counts
when it looks like a code (a digit or a symbol in it), so "mi pin de la bici es azul" passes
and "mi PIN es 4321" does not. Dates, times and phone numbers in ordinary text pass.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

#: Tokens with a known issuer's prefix: OpenAI/Anthropic-style keys, GitHub, AWS, Slack,
#: Google, GitLab, JSON web tokens, PEM private keys.
_TOKENS = re.compile(
    r"\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{8,}"
    r"|gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"
    r"|xox[abprs]-[A-Za-z0-9-]{10,}"
    r"|AIza[0-9A-Za-z_-]{30,}"
    r"|glpat-[A-Za-z0-9_-]{16,}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*)"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----"
)
#: Words after which a value is a secret when it looks like a code; the words between them
#: and the value ("del banco", "de la API", "for the server") are skipped, up to four.
_KEYWORDS = (
    r"contraseña|contrasena|password|passwd|passphrase|clave|pin|nip|cvv|cvc|"
    r"token|secret|secreto|api[ _-]?key|apikey|c[oó]digo de (?:seguridad|acceso|desbloqueo)"
)
_AFTER_WORD = re.compile(
    rf"\b(?:{_KEYWORDS})\b(?:[ \t]+[^\s:=]+){{0,4}}?[ \t]*(?:[:=]|\b(?:es|era|is|was|sería)\b)"
    r"[ \t]*[\"'«“]?(?P<value>[^\s\"'»”]+)",
    re.IGNORECASE,
)
#: "cuenta"/"account" followed by a long number (a bill's total is not one).
_ACCOUNT = re.compile(
    r"\b(?:cuenta|account|acct)\b[^\d\n]{0,30}(?P<value>\d[\d \-]{7,30}\d)", re.IGNORECASE
)
_CARD = re.compile(r"(?<![\d-])(?:\d[ -]?){12,18}\d(?![\d-])")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,4})?\b")
_LONG = re.compile(r"[A-Za-z0-9_\-+/=]{24,}")
_DATE_OR_TIME = re.compile(r"^\d{1,4}([/.:-])\d{1,2}(\1\d{1,4})?$")
#: Bits per character past which a long token with mixed letters and digits is a key.
_ENTROPY = 3.6


@dataclass(frozen=True)
class Found:
    """One secret: what kind (``password``, ``card``, ``iban``, ``account``, ``token``) and
    where it is in the text (start, end)."""

    kind: str
    start: int
    end: int


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        n = int(ch)
        if i % 2:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


def _iban_ok(text: str) -> bool:
    code = text.replace(" ", "")
    if not 15 <= len(code) <= 34:
        return False
    moved = code[4:] + code[:4]
    number = "".join(str(int(c, 36)) for c in moved)
    return int(number) % 97 == 1


def _entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def _looks_like_code(value: str) -> bool:
    value = value.rstrip(".,;)!?")
    if len(value) < 4 or _DATE_OR_TIME.match(value):
        return False
    return any(c.isdigit() for c in value) or any(c in "!@#$%^&*_+=?~<>|\\" for c in value)


def _high_entropy(token: str) -> bool:
    if "/" in token and not re.search(r"[+=]", token):  # a path
        return False
    if re.fullmatch(r"[0-9a-f]+", token):  # a hash (a commit, a checksum) names, it opens nothing
        return False
    kinds = sum(bool(re.search(p, token)) for p in (r"[a-z]", r"[A-Z]", r"\d"))
    return kinds == 3 and _entropy(token) >= _ENTROPY


def find(text: str) -> list[Found]:
    """Every secret in ``text``, in order of where it starts."""
    found: list[Found] = []
    for m in _TOKENS.finditer(text):
        found.append(Found("token", m.start(), m.end()))
    for m in _AFTER_WORD.finditer(text):
        if _looks_like_code(m.group("value")):
            found.append(Found("password", m.start("value"), m.end("value")))
    for m in _ACCOUNT.finditer(text):
        found.append(Found("account", m.start("value"), m.end("value")))
    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        if 13 <= len(digits) <= 19 and _luhn(digits):
            found.append(Found("card", m.start(), m.end()))
    for m in _IBAN.finditer(text):
        if _iban_ok(m.group()):
            found.append(Found("iban", m.start(), m.end()))
    for m in _LONG.finditer(text):
        if _high_entropy(m.group()):
            found.append(Found("token", m.start(), m.end()))
    found.sort(key=lambda f: (f.start, -f.end))
    return found


def kinds(text: str) -> list[str]:
    """The kinds of secret in ``text``, each once, in order of first appearance."""
    return list(dict.fromkeys(f.kind for f in find(text)))


def masked(text: str, limit: int = 80) -> str:
    """``text`` with every secret replaced by ``[kind]``, cut to ``limit`` characters: what a
    person may be shown of what was withheld, never the secret itself."""
    out: list[str] = []
    at = 0
    for f in find(text):
        if f.start < at:  # overlaps one already masked: mask its rest too
            at = max(at, f.end)
            continue
        out.append(text[at : f.start])
        out.append(f"[{f.kind}]")
        at = f.end
    out.append(text[at:])
    flat = " ".join("".join(out).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
