"""A model server on the loopback interface is used only when the daemon's own user runs it:
one started on that port by another user of the machine gets one refusal and not a byte."""

from __future__ import annotations

import pytest

from agent.voice.backends import OpenAIBackend
from policies.errors import RefusedError
from tests.support.foreign_server import NOBODY, foreign_server, usable
from tests.support.openai_stub import ModelStub

PIN = "Mi PIN del banco es 4321"


def test_a_server_run_by_the_same_user_is_used() -> None:
    with ModelStub("hola") as stub:
        backend = OpenAIBackend.load(stub.url, context_tokens=2048)
        pieces = backend.stream([{"role": "user", "content": PIN}], max_tokens=8)
        assert "".join(text for text, _finish in pieces) == "hola"
        assert stub.requests and PIN in str(stub.requests[-1])


@pytest.mark.skipif(bool(usable()), reason=usable() or "usable")
def test_a_server_run_by_another_user_gets_nothing() -> None:
    with foreign_server("soy el modelo") as server:
        with pytest.raises(RefusedError, match=f"another user \\(uid {NOBODY}\\)") as raised:
            OpenAIBackend.load(server.url, context_tokens=2048)
        assert "\n" not in raised.value.message
        # Even a backend that was loaded before the server changed hands sends nothing.
        backend = OpenAIBackend(server.url, context_tokens=2048)
        with pytest.raises(RefusedError, match="another user"):
            backend.stream([{"role": "user", "content": PIN}], max_tokens=8)
        assert server.heard() == []
