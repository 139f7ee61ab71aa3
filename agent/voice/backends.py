"""The two kinds of model ALMA can answer with: a GGUF file run by llama-cpp-python in a
process of its own (agent.voice.process; the child runs agent.voice.llama), or an OpenAI-compatible server on
this machine (llama.cpp's ``llama-server``, Ollama, text-generation-webui, koboldcpp,
``python -m llama_cpp.server``).

Both are used only from the model runtime's worker thread (agent.voice.model), one call at a time.
A server must be on the loopback interface: ALMA is offline, and a chat that holds the
person's memories never leaves the machine. Nor does it reach another person on it: every
connection is checked, before a byte is sent, to end in a socket the daemon's own user holds
(the kernel's socket table, /proc/net/tcp and tcp6), so a server another local user started on
that port gets nothing.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import logging
import os
import socket
import sys
import urllib.parse
from collections.abc import Iterator, Sequence
from typing import Any

from agent.voice.llama import json_format
from agent.voice.model import CHAT_SAMPLING, Backend, Chunk, Failure, Message, Sampling
from agent.voice.model_file import check_gguf, resolve_model_path
from agent.voice.process import ProcessBackend, ProcessOptions
from policies.errors import AlmaError, BadArgumentError, RefusedError
from policies.i18n import _
from policies.results import JSONObject

log = logging.getLogger("alma.model")


class OpenAIBackend:
    """``/v1/chat/completions`` with ``stream: true`` (server-sent events) on a loopback URL."""

    kind = "openai"
    failure: Failure | None = None  # a server that stops answering fails one request at a time

    def __init__(self, url: str, *, context_tokens: int, timeout: float = 600.0) -> None:
        self.path = url
        self.host, self.port, self.prefix = loopback_url(url)
        self.n_ctx = context_tokens
        self.threads: int | None = None
        self.timeout = timeout
        self._tokenize: str | None = None

    @classmethod
    def load(cls, url: str, *, context_tokens: int) -> OpenAIBackend:
        backend = cls(url, context_tokens=context_tokens)
        try:
            status, _body = backend._request("GET", "/v1/models", None, timeout=10.0)
        except OSError as exc:
            raise BadArgumentError(
                _(
                    "Nothing answers at {url} ({reason}); start the model server (e.g. "
                    "`python -m llama_cpp.server --model FILE --host 127.0.0.1 --port 8080`).",
                    url=url,
                    reason=exc.strerror or exc,
                )
            ) from None
        if status != 200:
            raise BadArgumentError(
                _(
                    "{url} answered /v1/models with HTTP {status}; is it an OpenAI-compatible "
                    "server?",
                    url=url,
                    status=status,
                )
            )
        backend._tokenize = backend._find_tokenizer()
        return backend

    def count_tokens(self, text: str) -> int:
        if self._tokenize is not None:
            try:
                status, body = self._request(
                    "POST", self._tokenize, {"input": text, "content": text}, timeout=30.0
                )
                tokens = json.loads(body).get("tokens") if status == 200 else None
                if isinstance(tokens, list):
                    return len(tokens)
            except (OSError, ValueError, AttributeError):
                pass
        # No tokenizer endpoint: about 3 bytes a token, on the generous side for Spanish.
        return len(text.encode("utf-8")) // 3 + 1

    def stream(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        json_schema: JSONObject | None = None,
        sampling: Sampling = CHAT_SAMPLING,
    ) -> Iterator[Chunk]:
        body: JSONObject = {
            "messages": list(messages),
            "max_tokens": max_tokens,
            "stream": True,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "frequency_penalty": sampling.frequency_penalty,
            "stop": list(sampling.stop[:4]),  # OpenAI's API takes at most four
        }
        if json_schema is not None:
            body["temperature"] = 0.0
            del body["stop"]
            body["response_format"] = json_format(json_schema)
        conn = _OwnServer(self.path, self.host, self.port, timeout=self.timeout)
        try:
            conn.request(
                "POST",
                self.prefix + "/v1/chat/completions",
                body=json.dumps(body).encode("utf-8"),
                headers={"Content-Type": "application/json", "Accept": "text/event-stream"},
            )
            response = conn.getresponse()
        except OSError as exc:
            conn.close()
            raise AlmaError(
                _(
                    "The model server at {url} stopped answering ({reason}); check that it is "
                    "running.",
                    url=self.path,
                    reason=exc.strerror or exc,
                )
            ) from None
        if response.status != 200:
            conn.close()
            raise AlmaError(
                _(
                    "The model server at {url} answered HTTP {status}.",
                    url=self.path,
                    status=response.status,
                )
            )
        return self._events(conn, response)

    def _events(
        self, conn: http.client.HTTPConnection, response: http.client.HTTPResponse
    ) -> Iterator[Chunk]:
        try:
            for raw in response:
                line = raw.decode("utf-8", "replace").strip()
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    return
                try:
                    choice = json.loads(data)["choices"][0]
                except (ValueError, KeyError, IndexError, TypeError):
                    continue  # a keep-alive or an event of another shape
                delta = choice.get("delta") or {}
                text = delta.get("content") if isinstance(delta, dict) else None
                finish = choice.get("finish_reason")
                yield (
                    (text if isinstance(text, str) else ""),
                    (finish if isinstance(finish, str) else None),
                )
        finally:
            conn.close()  # hanging up is how a client stops the server's generation

    def _find_tokenizer(self) -> str | None:
        # llama_cpp.server has /extras/tokenize, llama.cpp's llama-server /tokenize.
        for path in ("/extras/tokenize", "/tokenize"):
            try:
                status, body = self._request("POST", path, {"input": "a", "content": "a"}, 10.0)
            except OSError:
                return None
            if status == 200:
                try:
                    if isinstance(json.loads(body).get("tokens"), list):
                        return path
                except (ValueError, AttributeError):
                    continue
        return None

    def _request(
        self, method: str, path: str, body: JSONObject | None, timeout: float
    ) -> tuple[int, bytes]:
        conn = _OwnServer(self.path, self.host, self.port, timeout=timeout)
        try:
            data = None if body is None else json.dumps(body).encode("utf-8")
            headers = {"Content-Type": "application/json"} if body is not None else {}
            conn.request(method, self.prefix + path, body=data, headers=headers)
            response = conn.getresponse()
            return response.status, response.read(1 << 20)
        finally:
            conn.close()

    def close(self) -> None:
        pass  # nothing held between requests


class _OwnServer(http.client.HTTPConnection):
    """A connection used only once the socket at its other end is found to be the daemon's
    user's: else it is closed, nothing sent, and the refusal is one sentence."""

    def __init__(self, url: str, host: str, port: int, *, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self.url = url

    def connect(self) -> None:
        super().connect()
        owner = peer_uid(self.sock)
        if owner != os.getuid():
            self.close()
            log.error("model server %s: its socket is held by uid %s, refused", self.url, owner)
            if owner is None:
                raise RefusedError(
                    _(
                        "ALMA cannot tell who runs the model server at {url}, so it sends it "
                        "nothing; run the server as your own user on this machine.",
                        url=self.url,
                    )
                )
            raise RefusedError(
                _(
                    "The model server at {url} is run by another user (uid {uid}), so ALMA "
                    "sends it nothing; run the server as your own user, or use another port.",
                    url=self.url,
                    uid=owner,
                )
            )


_Address = tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]


def peer_uid(sock: socket.socket) -> int | None:
    """The uid that holds the socket at the other end of a loopback TCP connection (its
    server's, copied from the listening socket when the kernel accepted it), as the kernel's
    socket tables list it; None when no table lists it."""
    try:
        mine = _address(sock.getsockname())
        theirs = _address(sock.getpeername())
    except (OSError, ValueError):
        return None
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii") as lines:
                next(lines, None)  # the header
                for line in lines:
                    fields = line.split()
                    if len(fields) < 8:
                        continue
                    local, remote = _table_address(fields[1]), _table_address(fields[2])
                    if local == theirs and remote == mine:
                        return int(fields[7])
        except (OSError, ValueError):
            continue
    return None


def _address(name: tuple[Any, ...]) -> _Address:
    ip = ipaddress.ip_address(str(name[0]).partition("%")[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip, int(name[1])


def _table_address(text: str) -> _Address:
    """``0100007F:1F90`` (tcp) or 32 hex digits and a port (tcp6): each 32-bit word of the
    address is in the machine's byte order."""
    host, _sep, port = text.partition(":")
    packed = b"".join(
        int(host[i : i + 8], 16).to_bytes(4, sys.byteorder) for i in range(0, len(host), 8)
    )
    return _address((ipaddress.ip_address(packed), int(port, 16)))


def loopback_url(url: str) -> tuple[str, int, str]:
    """``(host, port, path prefix)`` of an ``http://`` URL on this machine, else one sentence."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    refusal = _(
        "The model server URL {url} is not on this machine; ALMA only talks to a server on "
        "the loopback interface (http://127.0.0.1:PORT or http://localhost:PORT).",
        url=url,
    )
    if parts.scheme != "http":
        raise BadArgumentError(
            _(
                "The model server URL {url} must start with http:// (a loopback server needs "
                "no TLS).",
                url=url,
            )
        )
    if host != "localhost":
        try:
            if not ipaddress.ip_address(host).is_loopback:
                raise BadArgumentError(refusal)
        except ValueError:
            raise BadArgumentError(refusal) from None
    try:
        port = parts.port or 80
    except ValueError:
        raise BadArgumentError(
            _("The model server URL {url} has an invalid port.", url=url)
        ) from None
    return host, port, parts.path.rstrip("/").removesuffix("/v1")


def load(path: str, options: ProcessOptions, lora: str | None = None) -> Backend:
    """The backend for a runtime path: a server URL, or "embedded" or a GGUF file, which is
    checked here (one sentence at once) and then run in a model process of its own, with the
    LoRA adapter ``lora`` applied (checked to fit by the runtime, agent.voice.model)."""
    if path.startswith(("http://", "https://")):
        return OpenAIBackend.load(path, context_tokens=options.n_ctx)
    model = resolve_model_path(path)
    check_gguf(model)
    return ProcessBackend.start(str(model), options, lora)
