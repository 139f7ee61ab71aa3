"""The messages of the code, read from the source, against the catalogs in ``policies/locale``.

    .venv/bin/python -m tests.support.catalog          # entries es.po lacks, as .po text to fill in
    .venv/bin/python -m tests.support.catalog --stale  # entries es.po has that no code uses

A message is the first literal argument of ``_``, ``N_``, ``ngettext`` (both forms) and
``pgettext`` (with its context); folder names are the categories of
:mod:`actions.planners.categories` in the context ``folder``. The test of the catalogs
(tests/unit/test_i18n.py) uses the same reader, so the two cannot disagree.
"""

from __future__ import annotations

import ast
import string
import sys
from dataclasses import dataclass, field
from pathlib import Path

from actions.planners.categories import CATEGORIES
from policies.i18n import _CONTEXT_SEP, LANGUAGES, SOURCE_LANGUAGE, catalog_path, parse_po

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("agent", "policies", "actions", "sandbox", "state", "control", "panel")
_MARKERS = frozenset({"_", "N_", "ngettext", "pgettext"})


@dataclass
class Message:
    key: str  # msgid, or msgctxt + 0x04 + msgid
    plural: str | None = None
    places: list[str] = field(default_factory=list)


@dataclass
class Extracted:
    messages: dict[str, Message]
    problems: list[str]  # calls whose message cannot be read from the source


def _literal(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _marker(node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Name) and func.id in _MARKERS:
        return func.id
    return None


def extract(packages: tuple[str, ...] = PACKAGES) -> Extracted:
    messages: dict[str, Message] = {}
    problems: list[str] = []

    def add(key: str, where: str, plural: str | None = None) -> None:
        message = messages.setdefault(key, Message(key, plural))
        message.places.append(where)
        if plural is not None and message.plural not in (None, plural):
            problems.append(f"{where}: {key!r} has two plural forms")

    for package in packages:
        for path in sorted((REPO / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            rel = path.relative_to(REPO).as_posix()
            problems += _shadowed_marker(tree, rel)
            for node in ast.walk(tree):
                if not isinstance(node, ast.Call):
                    continue
                name = _marker(node)
                if name is None or not node.args:
                    continue
                where = f"{rel}:{node.lineno}"
                first = _literal(node.args[0])
                if name == "_":
                    if isinstance(node.args[0], ast.JoinedStr):
                        problems.append(f"{where}: _() of an f-string never matches the catalog")
                    elif first is not None:
                        add(first, where)
                    # else: a message marked with N_ elsewhere, translated here
                elif name == "N_":
                    if first is None:
                        problems.append(f"{where}: N_() needs a literal message")
                    else:
                        add(first, where)
                elif name == "ngettext":
                    second = _literal(node.args[1]) if len(node.args) > 1 else None
                    if first is None or second is None:
                        problems.append(f"{where}: ngettext() needs two literal messages")
                    else:
                        add(first, where, plural=second)
                else:  # pgettext(context, message)
                    second = _literal(node.args[1]) if len(node.args) > 1 else None
                    if first is None or second is None:
                        problems.append(f"{where}: pgettext() needs a literal context and message")
                    else:
                        add(first + _CONTEXT_SEP + second, where)
    for category in CATEGORIES:
        add("folder" + _CONTEXT_SEP + category, "actions/planners/categories.py")
    return Extracted(messages, problems)


def _shadowed_marker(tree: ast.Module, rel: str) -> list[str]:
    """``_`` bound as a throwaway (``conn, _ = ...``) in a module that translates with ``_``:
    inside that function every ``_("...")`` then fails (UnboundLocalError) or calls a string."""
    imported = any(
        isinstance(node, ast.ImportFrom)
        and node.module == "policies.i18n"
        and any(alias.name == "_" and alias.asname is None for alias in node.names)
        for node in tree.body
    )
    if not imported:
        return []
    return [
        f"{rel}:{node.lineno}: `_` is assigned here but is the translation function; "
        "name the throwaway `_unused` or similar"
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and node.id == "_" and isinstance(node.ctx, ast.Store)
    ]


def fields(text: str) -> set[str]:
    """The ``{name}`` fields of a message (what ``.format`` fills in)."""
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def _quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def po_entry(message: Message) -> str:
    # Files only: line numbers would make every edit of the code an edit of the catalog.
    files = dict.fromkeys(place.partition(":")[0] for place in message.places)
    lines = [f"#: {' '.join(list(files)[:3])}"]
    context, sep, msgid = message.key.rpartition(_CONTEXT_SEP)
    if sep:
        lines.append(f"msgctxt {_quote(context)}")
    lines.append(f"msgid {_quote(msgid)}")
    if message.plural is not None:
        lines += [f"msgid_plural {_quote(message.plural)}", 'msgstr[0] ""', 'msgstr[1] ""']
    else:
        lines.append('msgstr ""')
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    extracted = extract()
    for problem in extracted.problems:
        print(f"# PROBLEM {problem}", file=sys.stderr)
    for lang in LANGUAGES:
        if lang == SOURCE_LANGUAGE:
            continue
        catalog = parse_po(Path(catalog_path(lang)).read_text(encoding="utf-8"))
        if "--stale" in argv:
            for key in sorted(set(catalog) - set(extracted.messages)):
                print(f"# {lang}: stale {key!r}")
            continue
        for key, message in extracted.messages.items():
            if not any(catalog.get(key, ("",))):
                print(po_entry(message))
    return 1 if extracted.problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
