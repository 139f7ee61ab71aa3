"""The model's edge in in-process tests: a ``complete()`` (agent.voice.model's signature) that answers
what it is given and records every call, so a test checks what ALMA asked as well as what it did
with the answer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class FakeComplete:
    """Answers ``content`` (None: no model, or busy past the timeout; any other type on purpose
    in tests of the validation), and records each call's arguments in ``calls``."""

    def __init__(self, content: Any) -> None:
        self.content = content
        self.calls: list[dict[str, Any]] = []

    def __call__(
        self,
        messages: Sequence[dict[str, str]],
        *,
        max_tokens: int,
        json_schema: dict[str, Any] | None = None,
        timeout_s: float,
    ) -> str | None:
        self.calls.append(
            {
                "messages": list(messages),
                "max_tokens": max_tokens,
                "json_schema": json_schema,
                "timeout_s": timeout_s,
            }
        )
        return self.content  # type: ignore[no-any-return]  # wrong types on purpose, some tests

    @property
    def asked(self) -> list[str]:
        """The last message of each call: what the model was asked."""
        return [call["messages"][-1]["content"] for call in self.calls]
