"""Fixtures for the end-to-end tier: a fresh root per test, the real daemon, the real alma-ctl."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.daemon import DaemonRoot
from tests.support.tmux import term as term  # the one terminal fixture, for the chat's tests


@pytest.fixture
def alma() -> Iterator[DaemonRoot]:
    """An initialized root with ``settle_seconds = 0`` (files count at once) and no noise
    budget (a test makes many suggestions in a day; the budget's own tests keep it: the weeks
    lived with ALMA); not started."""
    d = DaemonRoot().init()
    d.policy(monitor__settle_seconds=0, monitor__new_per_day=0)
    try:
        yield d
    finally:
        d.close()


@pytest.fixture
def alma_mem() -> Iterator[DaemonRoot]:
    """An initialized root, memory enabled, ``settle_seconds = 0``, no noise budget; not
    started."""
    d = DaemonRoot(memory=True).init()
    d.policy(monitor__settle_seconds=0, monitor__new_per_day=0)
    try:
        yield d
    finally:
        d.close()


@pytest.fixture
def alma_chat(alma_mem: DaemonRoot) -> DaemonRoot:
    """``alma_mem`` for the chat's tests: answers of at most 96 tokens, long enough to watch
    them stream and short enough for a loaded machine; not started."""
    alma_mem.set_settings("model", "max_tokens", 96)
    return alma_mem
