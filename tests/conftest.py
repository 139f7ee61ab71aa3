"""Fixtures shared by every tier of tests."""

from __future__ import annotations

import pytest

from state.memory.embedder import get_embedder


@pytest.fixture(scope="session")
def embedder_loaded() -> None:
    """The real offline embedder, loaded once per test session (it takes a few seconds)."""
    get_embedder("e5-small")
