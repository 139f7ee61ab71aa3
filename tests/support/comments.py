"""Figures and history in the code's comments and docstrings, found with :mod:`tokenize`.

    .venv/bin/python -m tests.support.comments     # every comment or docstring line that breaks a rule

Comments say why, briefly: a measured figure (``40 ms``, ``300 MB``, ``4.5x``, ``3x the floor``)
belongs in docs/benchmarks.md beside the command that gives it, and what the code used to do
belongs in ``git log``. Two rules, read from every comment and every docstring of the code's
packages and of bench/ (tests/unit/test_comments.py runs them):

- :data:`FIGURE`: a number with a unit of time or size, a ratio (``4x``, "five times faster")
  or a percentage;
- :data:`HISTORY`: "used to", "issue N", "Must show N", "previously", "formerly", "before this
  change", "on main".

Literals between double backquotes (````30min````, a text a regex must read) are examples, not
figures, and are left out. Bytes are not a unit here: a format's field sizes and the kernel's
limits are facts of the format, not measurements. Test files are read for the second rule only
(:func:`findings_in_tests`): a test's name and docstring say the behaviour, not where it came
from.
"""

from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CODE = ("agent", "control", "actions", "policies", "sandbox", "state", "bench")


_UNIT = (
    r"ms|µs|us|ns|s|secs?|seconds?|minutes?|mins?|h|hours?|days?"
    r"|[kKMGT]i?B|kilobytes?|megabytes?|gigabytes?"
)
#: A number with a unit of time or size, a ratio, or a percentage.
FIGURE = re.compile(
    rf"(?<![\w.])\d[\d,_]*(?:\.\d+)?(?:\s?-\s?\d[\d,_]*(?:\.\d+)?)?\s?(?:{_UNIT})\b"
    r"|(?<![\w.])\d+(?:\.\d+)?\s?[x×](?!\w)"
    r"|\bx the floor\b|\d\s?times the floor\b"
    r"|(?<![\w.])\d+(?:\.\d+)?\s?%|\bper ?cent\b"
    r"|\b(?:\d+|two|three|four|five|six|seven|eight|nine|ten)\s+times\s+"
    r"(?:faster|slower|as\b|the\b|more\b|less\b|larger|smaller)",
    re.IGNORECASE,
)
#: Words that tell what the code was, not what it is.
HISTORY = re.compile(
    r"(?<!\bis )(?<!\bare )(?<!\bbe )\bused to\b"
    r"|\bissue\s?#?\d+|\bmust show\s?\d"
    r"|\bpreviously\b|\bformerly\b|\bbefore (?:this|the) (?:change|fix|commit)\b"
    r"|\bon main\b",
    re.IGNORECASE,
)
_LITERAL = re.compile(r"``.*?``")


def texts(source: str) -> Iterator[tuple[int, str]]:
    """Every comment line and every docstring line of ``source``, with its line number."""
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                for offset, line in enumerate(first.value.value.splitlines()):
                    yield first.lineno + offset, line


def _test_name_lines(source: str) -> Iterator[tuple[int, str]]:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.lineno, node.name.replace("_", " ")


def _scan(path: Path, rules: tuple[re.Pattern[str], ...], *, names: bool = False) -> Iterator[str]:
    source = path.read_text(encoding="utf-8")
    raw = source.replace("_", " ") if names else source
    if not any(rule.search(raw) for rule in rules):
        return  # nothing anywhere in the file: no need to tokenize it
    rel = path.relative_to(REPO).as_posix()
    lines = list(texts(source))
    if names:
        lines += _test_name_lines(source)
    for line_no, text in sorted(lines):
        plain = _LITERAL.sub("", text)
        if any(rule.search(plain) for rule in rules):
            yield f"{rel}:{line_no}: {text.strip()}"


def findings_in_code(roots: tuple[str, ...] = CODE) -> list[str]:
    """Comment and docstring lines of the code (bench included) with a figure or history."""
    found: list[str] = []
    for root in roots:
        for path in sorted((REPO / root).rglob("*.py")):
            found += _scan(path, (FIGURE, HISTORY))
    return found


def findings_in_tests() -> list[str]:
    """Test names, comments and docstrings that name an issue instead of the behaviour."""
    found: list[str] = []
    for path in sorted((REPO / "tests").rglob("*.py")):
        if path.name != "comments.py":
            found += _scan(path, (HISTORY,), names=True)
    return found


if __name__ == "__main__":
    lines = findings_in_code() + findings_in_tests()
    print("\n".join(lines))
    sys.exit(1 if lines else 0)
