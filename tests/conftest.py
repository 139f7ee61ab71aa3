"""Fixtures shared by every tier of tests."""

from __future__ import annotations

import pytest

from state.memory.embedder import get_embedder


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every end-to-end test starts the real daemon (seconds each): it belongs to the slow
    tier, so ``-m "not slow"`` is the everyday one (README, Development)."""
    for item in items:
        if item.get_closest_marker("e2e") is not None and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def embedder_loaded() -> None:
    """The real offline embedder, loaded once per test session (it takes a few seconds)."""
    get_embedder("e5-small")


def _english_locale() -> None:
    # Messages follow the locale (policies.i18n): the suite reads them in English whatever the
    # machine's locale, and the daemons it starts inherit this. Tests of Spanish set it. A
    # locale that names English: under C the daemon would speak the language of a root's logs.
    import os

    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        os.environ.pop(name, None)
    os.environ["LANG"] = "en_US.UTF-8"


_english_locale()
