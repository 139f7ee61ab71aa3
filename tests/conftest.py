"""Fixtures shared by every tier of tests."""

from __future__ import annotations

import pytest

from state.memory.embedder import get_embedder


@pytest.fixture(scope="session")
def embedder_loaded() -> None:
    """The real offline embedder, loaded once per test session (it takes a few seconds)."""
    get_embedder("e5-small")


def _english_locale() -> None:
    # Messages follow the locale (policies.i18n): the suite reads them in English whatever the
    # machine's locale, and the daemons it starts inherit this. Tests of Spanish set it.
    import os

    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        os.environ.pop(name, None)
    os.environ["LANG"] = "C.UTF-8"


_english_locale()
