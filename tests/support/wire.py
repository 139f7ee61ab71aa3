"""What tests read back from the socket, typed for indexing.

``Client.call`` returns ``object`` (a JSON value) and the raw readers yield JSON lines: a test
that indexes them asserts their shape, so it says so once here instead of silencing mypy on
every line."""

from __future__ import annotations

from typing import Any


def obj(value: object) -> dict[str, Any]:
    """``value`` as the JSON object it must be; anything else fails the test with its value."""
    assert isinstance(value, dict), f"expected a JSON object, got {value!r}"
    return value
