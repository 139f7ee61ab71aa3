"""Translation: which language the locale and the wire ask for, the .po reader, the catalogs."""

from __future__ import annotations

import ast
import threading
from pathlib import Path

import pytest

from policies import i18n
from policies.i18n import (
    LANGUAGES,
    SOURCE_LANGUAGE,
    Said,
    _,
    current_language,
    folder_name,
    language,
    locale_language,
    ngettext,
    parse_po,
)
from tests.support.catalog import Extracted, extract, fields


@pytest.fixture(scope="module")
def extracted() -> Extracted:
    """The code's messages, read from the source once for the tests of the catalogs."""
    return extract()


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, "en"),
        ({"LANG": "C"}, "en"),
        ({"LANG": "C.UTF-8"}, "en"),
        ({"LANG": "POSIX"}, "en"),
        ({"LANG": "es_ES.UTF-8"}, "es"),
        ({"LANG": "es_MX.utf8"}, "es"),
        ({"LANG": "es_ES@euro"}, "es"),
        ({"LANG": "en_US.UTF-8"}, "en"),
        ({"LANG": "fr_FR.UTF-8"}, "en"),  # no catalog: the source language
        ({"LANG": "es_ES.UTF-8", "LC_MESSAGES": "en_GB.UTF-8"}, "en"),
        ({"LANG": "en_US.UTF-8", "LC_MESSAGES": "es_ES.UTF-8"}, "es"),
        ({"LANG": "en_US.UTF-8", "LC_ALL": "es_AR.UTF-8"}, "es"),
        ({"LC_ALL": "C", "LANG": "es_ES.UTF-8"}, "en"),
        ({"LANGUAGE": "fr:es", "LANG": "en_US.UTF-8"}, "es"),
        ({"LANGUAGE": "en:es", "LANG": "es_ES.UTF-8"}, "en"),
        ({"LANGUAGE": "", "LANG": "es_ES.UTF-8"}, "es"),  # empty counts as unset, as in gettext
        ({"LANGUAGE": "de", "LANG": "es_ES.UTF-8"}, "en"),  # the first set variable decides
        ({"LANG": "../../etc/passwd"}, "en"),
    ],
)
def test_the_locale_decides_as_gettext_reads_it(environ: dict[str, str], expected: str) -> None:
    assert locale_language(environ) == expected


def test_a_request_language_wins_over_the_process_and_stays_in_its_thread() -> None:
    seen: list[str] = []
    with language("es"):
        assert current_language() == "es"
        thread = threading.Thread(target=lambda: seen.append(current_language()))
        thread.start()
        thread.join()
        with language(None):  # None keeps what is set
            assert current_language() == "es"
        with language("en"):
            assert current_language() == "en"
        assert current_language() == "es"
    assert seen == [current_language()]  # a new thread reads the process's language
    assert current_language() == SOURCE_LANGUAGE  # the test run is English (tests/conftest.py)


def test_spanish_and_english_sentences_with_fields() -> None:
    message = "The daemon's answer is larger than {limit} bytes."
    assert _(message, limit=5) == "The daemon's answer is larger than 5 bytes."
    with language("es"):
        assert _(message, limit=5) == "La respuesta del daemon ocupa más de 5 bytes."
        assert _("A message no catalog has.") == "A message no catalog has."
        assert ngettext(
            "Unknown request field: {names}.", "Unknown request fields: {names}.", 1, names="'x'"
        ) == ("Campo desconocido en la petición: 'x'.")
        assert ngettext(
            "Unknown request field: {names}.",
            "Unknown request fields: {names}.",
            2,
            names="'x', 'y'",
        ) == ("Campos desconocidos en la petición: 'x', 'y'.")
    assert ngettext("{n} file", "{n} files", 0) == "0 files"


def test_folder_names_follow_the_language() -> None:
    assert folder_name("images", "en") == "images"
    assert folder_name("images", "es") == "imágenes"
    assert folder_name("video", "es") == "vídeos"
    assert folder_name("documents", "es") == "documentos"


def test_the_po_reader() -> None:
    text = r"""
# a comment
msgid ""
msgstr ""
"Language: es\n"

#: somewhere.py
msgid "Hello {name}."
msgstr "Hola {name}."

#, fuzzy
msgid "Guessed"
msgstr "Adivinado"

msgctxt "folder"
msgid "images"
msgstr "imágenes"

msgid "one"
msgid_plural "many"
msgstr[0] "uno"
msgstr[1] "muchos"
msgid "long"
msgstr ""
"line one\n"
"line \"two\"\\"
msgid "after a glued entry"
msgstr "tras una entrada pegada"
"""
    duplicates: list[str] = []
    catalog = parse_po(text + '\nmsgid "one"\nmsgstr "otra vez"\n', duplicates)
    assert duplicates == ["one"]
    catalog = parse_po(text)
    assert catalog == {
        "Hello {name}.": ("Hola {name}.",),
        "folder\x04images": ("imágenes",),
        "one": ("uno", "muchos"),
        "long": ('line one\nline "two"\\',),
        "after a glued entry": ("tras una entrada pegada",),
    }


def test_a_missing_catalog_means_english(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(i18n, "_LOCALE_DIR", str(tmp_path))
    monkeypatch.setattr(i18n, "_catalogs", {})
    with language("es"):
        assert _("The request must be a JSON object.") == "The request must be a JSON object."


# --------------------------------------------------------------------------- the catalogs


def _catalog(lang: str) -> dict[str, tuple[str, ...]]:
    return parse_po(Path(i18n.catalog_path(lang)).read_text(encoding="utf-8"))


@pytest.mark.parametrize("lang", [lang for lang in LANGUAGES if lang != SOURCE_LANGUAGE])
def test_no_entry_is_in_the_catalog_twice(lang: str) -> None:
    duplicates: list[str] = []
    parse_po(Path(i18n.catalog_path(lang)).read_text(encoding="utf-8"), duplicates)
    assert duplicates == [], "two entries of one message (msgfmt refuses that): keep one"


def test_every_message_in_the_code_can_be_read_from_the_source(extracted: Extracted) -> None:
    assert extracted.problems == []


@pytest.mark.parametrize("lang", [lang for lang in LANGUAGES if lang != SOURCE_LANGUAGE])
def test_every_message_has_a_translation_and_no_entry_is_stale(
    lang: str, extracted: Extracted
) -> None:
    messages = extracted.messages
    catalog = _catalog(lang)
    missing = sorted(key for key in messages if not all(catalog.get(key, ("",))))
    stale = sorted(set(catalog) - set(messages))
    assert missing == [], (
        f"{len(missing)} message(s) lack a {lang} translation; "
        "`python -m tests.support.catalog` prints them as .po entries to fill in"
    )
    assert stale == [], f"entries of {lang}.po that no code uses any more: remove them"


@pytest.mark.parametrize("lang", [lang for lang in LANGUAGES if lang != SOURCE_LANGUAGE])
def test_translations_keep_the_fields_and_the_plural_forms(lang: str, extracted: Extracted) -> None:
    messages = extracted.messages
    catalog = _catalog(lang)
    for key, message in messages.items():
        forms = catalog[key]
        msgid = key.rpartition("\x04")[2]
        if message.plural is None:
            assert len(forms) == 1, f"{msgid!r} is not a plural message"
            assert fields(forms[0]) == fields(msgid), f"fields differ in {msgid!r}"
        else:
            assert len(forms) == 2, f"{msgid!r} needs two plural forms"
            wanted = fields(msgid) | fields(message.plural)
            for form in forms:
                assert fields(form) <= wanted, f"unknown field in {form!r}"
            assert fields(forms[1]) == fields(message.plural), f"fields differ in {msgid!r}"


def test_folder_names_are_distinct_and_valid_in_every_language() -> None:
    from actions.planners.categories import CATEGORIES

    for lang in LANGUAGES:
        names = [folder_name(category, lang) for category in CATEGORIES]
        assert len({name.casefold() for name in names}) == len(names), lang
        for name in names:
            assert name and "/" not in name and name not in (".", "..") and name == name.strip()


def _bare_messages(path: Path) -> list[str]:
    """Errors a person reads, raised with a sentence that bypasses ``_()``: an ``AlmaError``
    (or the daemon's start ``Refusal``) made from a literal, an f-string or a concatenation."""
    from policies.errors import ERROR_CLASSES

    names = {cls.__name__ for cls in ERROR_CLASSES.values()} | {"Refusal"}
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if not (isinstance(node, ast.Call) and node.args):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        first = node.args[0]
        literal = isinstance(first, ast.JoinedStr | ast.BinOp) or (
            isinstance(first, ast.Constant) and isinstance(first.value, str)
        )
        if name in names and literal:
            found.append(f"{path.name}:{node.lineno}")
    return found


def test_every_error_a_person_reads_goes_through_the_catalog() -> None:
    from tests.support.catalog import PACKAGES, REPO

    bare = [
        where
        for package in PACKAGES
        for path in sorted((REPO / package).rglob("*.py"))
        for where in _bare_messages(path)
    ]
    assert bare == [], "wrap these messages in _() and add their Spanish to es.po"


def test_the_check_for_bare_messages_finds_one(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        'raise ConflictError(f"{x!r} moved")\n'
        'raise errors.RefusedError("no")\n'
        'raise ConflictError(_("{x!r} moved", x=x))\n'
        "raise ConflictError(message)\n",
        encoding="utf-8",
    )
    assert _bare_messages(sample) == ["sample.py:1", "sample.py:2"]


def test_errors_of_the_engine_and_of_the_system_are_spanish_for_a_spanish_person() -> None:
    import errno

    from actions.safefs import split_relpath
    from policies.errors import RefusedError, as_alma_error

    with language("es"):
        with pytest.raises(RefusedError, match="no es una ruta relativa a la raíz de ALMA"):
            split_relpath("/etc/passwd")
        full = as_alma_error(OSError(errno.ENOSPC, "No space left on device", "user/a"))
        assert full.message.startswith("ALMA se detuvo: el disco está lleno"), full.message
    with pytest.raises(RefusedError, match="is not a path relative to the ALMA root"):
        split_relpath("/etc/passwd")


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, None),
        ({"LANG": "C.UTF-8"}, None),
        ({"LC_ALL": "POSIX", "LANG": "es_ES.UTF-8"}, None),  # the first set variable decides
        ({"LANGUAGE": "C"}, None),
        ({"LANG": "es_ES.UTF-8"}, "es"),
        ({"LANG": "fr_FR.UTF-8"}, "en"),  # a language is named: it has no catalog
        ({"LANG": "../../etc/passwd"}, "en"),
    ],
)
def test_a_locale_that_names_no_language_says_nothing(
    environ: dict[str, str], expected: str | None
) -> None:
    assert i18n.locale_names(environ) == expected


def test_where_the_locale_says_nothing_the_persons_own_language_decides(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(i18n, "_process_language", None)
    monkeypatch.setattr(i18n, "_fallback_language", None)
    monkeypatch.setenv("LANG", "C.UTF-8")
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    assert i18n.process_language() == "en"
    i18n.set_fallback_language("es")
    assert i18n.process_language() == "es"
    monkeypatch.setenv("LANG", "en_US.UTF-8")  # a locale that names one wins over the fallback
    i18n.set_fallback_language("es")
    assert i18n.process_language() == "en"
    i18n.set_language("es")  # and a setting wins over both
    assert i18n.process_language() == "es"
    i18n.set_language(None)


def test_a_client_whose_locale_names_no_language_speaks_its_daemons(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(i18n, "_process_language", None)
    monkeypatch.setattr(i18n, "_fallback_language", None)
    monkeypatch.setattr(i18n, "_setting", None)
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    written = tmp_path / "language"
    for content, expected in [(b"es\n", "es"), (b"../x", None), (b"fr\n", None), (b"", None)]:
        written.write_bytes(content)
        assert i18n.remembered_language(written) == expected
    assert i18n.remembered_language(tmp_path / "missing") is None
    (tmp_path / "link").symlink_to(written)
    written.write_bytes(b"es\n")
    assert i18n.remembered_language(tmp_path / "link") is None  # never through a link

    monkeypatch.setenv("LANG", "es_ES.UTF-8")
    written.write_bytes(b"en\n")
    i18n.follow_root_language(str(written))  # the locale names Spanish: it decides
    assert i18n.process_language() == "es"
    monkeypatch.setenv("LANG", "C.UTF-8")
    written.write_bytes(b"es\n")
    i18n.follow_root_language(str(written))
    assert i18n.process_language() == "es"
    i18n.set_fallback_language(None)


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        (["Hoy he terminado el informe y mañana tengo que llamar a Lucía."], "es"),
        (["Estoy cansado, pero el backup por fin funciona.", "¿Qué hago con esto?"], "es"),
        (["I finished the report today and I'll call Lucy tomorrow."], "en"),
        (["ok", "vale", "👍"], None),  # too little to tell
        ([], None),
    ],
)
def test_the_language_of_a_persons_own_words(texts: list[str], expected: str | None) -> None:
    assert i18n.guess_language(texts) == expected


def test_a_sentence_is_said_again_in_the_language_of_the_moment() -> None:
    with language("es"):
        said = ngettext("{n} file", "{n} files", 3)
        title = i18n._("Organize {folder} by file type", folder="user/descargas")
        nested = i18n._("ALMA did: {title}", title=title)
    assert (title, said) == ("Ordenar user/descargas por tipo de archivo", "3 archivos")
    assert isinstance(title, Said) and isinstance(said, Said) and isinstance(nested, Said)
    with language("en"):
        assert i18n.say_again(title.key) == "Organize user/descargas by file type"
        assert i18n.say_again(said.key) == "3 files"
        assert i18n.say_again(nested.key) == "ALMA did: Organize user/descargas by file type"
    assert i18n.say_again({"m": "A sentence no catalog holds"}) == "A sentence no catalog holds"
    with language("es"):  # a message that left the catalog: the caller keeps what it stored
        assert i18n.say_again({"m": "A sentence no catalog holds"}) is None
    for damaged in (None, "x", {"m": 3}, {"m": "{n} file", "p": "{n} files", "n": "3"}):
        assert i18n.say_again(damaged) is None
    assert i18n.say_again({"m": "Organize {folder} by file type", "v": {}}) is None


def test_a_stored_suggestion_reads_in_the_language_it_is_shown_in(tmp_path: Path) -> None:
    from actions.planners.base import PlanResult
    from state.suggestions import SuggestionStore

    store = SuggestionStore(tmp_path / "alma.db")
    with language("en"):
        finding = PlanResult(
            "organize",
            "user/d",
            i18n._("Organize {folder} by file type", folder="user/d"),
            ngettext("{n} file", "{n} files", 2),
            [ngettext("{n} file", "{n} files", 1), "user/d/a.jpg"],
            [],
            2,
            "f" * 16,
        )
        sid = store.propose(finding, needs_approval=True)
    with language("es"):
        shown = store.get(sid, with_plan=False)
    assert shown["title"] == "Ordenar user/d por tipo de archivo"
    assert (shown["reason"], shown["evidence"]) == ("2 archivos", ["1 archivo", "user/d/a.jpg"])
    with language("en"):
        assert store.list()[0]["title"] == "Organize user/d by file type"
    store.close()
