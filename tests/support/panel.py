"""The web panel in tests: a root whose daemon runs the panel, and a real browser to open it.

The browser is Debian's chromium (``/usr/bin/chromium``) driven by Playwright's sync API;
``./alma.sh setup`` installs both where it can. When one is missing a test says so: a skip
with the sentence on a person's machine, a failure in CI (``CI=true``), where a missing browser
would otherwise turn every browser test into a silent pass.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.support.daemon import DaemonRoot

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
#: Where the pages' screenshots go (docs/panel.md shows them).
SHOTS = Path(__file__).resolve().parents[2] / "docs" / "panel"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def with_panel(alma: DaemonRoot) -> int:
    """Turn the panel on for ``alma`` (not started): ``[web] port`` in alma.toml, a free one;
    the test environment turns the panel off by default, so the variable turns it on."""
    port = free_port()
    alma.set_settings("web", "port", port)
    alma.extra_env["ALMA_WEB__ENABLED"] = "true"
    return port


def missing_browser(why: str) -> None:
    sentence = f"the panel's browser tests need {why}; `./alma.sh setup` installs it"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{sentence} (CI: a missing browser is a failure)")
    pytest.skip(sentence)


@contextmanager
def browser() -> Iterator[Any]:
    """A headless chromium, or a skip (a failure in CI) that says what is missing."""
    if not os.access(CHROMIUM, os.X_OK):
        missing_browser(f"Debian's chromium at {CHROMIUM} (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing_browser("Playwright for Python (pip install playwright, the dev extra)")
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


def login_url(alma: DaemonRoot) -> str:
    """The URL ``alma-ctl web --json`` prints (a one-time login token in it)."""
    data = alma.ok("web")
    assert isinstance(data, dict) and data["url"].startswith("http://127.0.0.1:"), data
    return str(data["url"])
