"""The two kinds of model ALMA can answer with: a GGUF file run by llama-cpp-python in a
process of its own (agent.voice.process, agent.voice.worker), or an OpenAI-compatible server on
this machine (llama.cpp's ``llama-server``, Ollama, text-generation-webui, koboldcpp,
``python -m llama_cpp.server``).

Both are used only from the model runtime's worker thread (agent.voice.model), one call at a time.
A server must be on the loopback interface: ALMA is offline, and a chat that holds the
person's memories never leaves the machine.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import logging
import urllib.parse
from collections.abc import Iterator, Sequence
from typing import Any

from agent.voice.files import check_gguf, resolve_model_path
from agent.voice.model import CHAT_SAMPLING, Backend, Chunk, Failure, Message, Sampling
from agent.voice.process import ProcessBackend, ProcessOptions
from policies.errors import AlmaError, BadArgumentError
from policies.i18n import _

log = logging.getLogger("alma.model")


class LlamaBackend:
    """llama.cpp in this process: the model process's (agent.voice.worker), never the daemon's."""

    kind = "llama-cpp"
    failure: Failure | None = None

    def __init__(self, llama: Any, path: str, threads: int) -> None:
        self.llama = llama
        self.path = path
        self.threads: int | None = threads
        self.n_ctx = int(llama.n_ctx())

    @classmethod
    def load(cls, path: str, *, context_tokens: int, threads: int) -> LlamaBackend:
        model = resolve_model_path(path)
        check_gguf(model)
        from llama_cpp import Llama  # heavy (ctypes, numpy): only when a model is wanted

        try:
            llama = Llama(
                model_path=str(model), n_ctx=context_tokens, n_threads=threads, verbose=False
            )
        except (ValueError, RuntimeError, OSError) as exc:
            log.warning("llama.cpp refused %s: %s", model, exc)
            raise BadArgumentError(
                _(
                    "{path} could not be loaded as a model (it may be truncated, damaged or of "
                    "an architecture this llama.cpp does not know); download it again or "
                    "choose another GGUF file.",
                    path=model,
                )
            ) from None
        if not llama.metadata.get("tokenizer.chat_template"):
            llama.close()
            raise BadArgumentError(
                _(
                    "{path} has no chat template, so it cannot hold a conversation (it is "
                    "probably a base model); choose an instruction-tuned (Instruct or Chat) GGUF.",
                    path=model,
                )
            )
        # A context larger than the model was trained on only gives it text it cannot read.
        trained = int(llama._model.n_ctx_train())  # no public accessor in 0.3
        if 0 < trained < llama.n_ctx():
            llama.close()
            llama = Llama(model_path=str(model), n_ctx=trained, n_threads=threads, verbose=False)
        return cls(llama, str(model), threads)

    def count_tokens(self, text: str) -> int:
        return len(self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def stream(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        json_schema: dict[str, Any] | None = None,
        sampling: Sampling = CHAT_SAMPLING,
    ) -> Iterator[Chunk]:
        kwargs: dict[str, Any] = {
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "top_k": sampling.top_k,
            "repeat_penalty": sampling.repeat_penalty,
            "stop": list(sampling.stop),
        }
        if json_schema is not None:
            kwargs = {"temperature": 0.0, "response_format": _json_format(json_schema)}
        chunks = self.llama.create_chat_completion(
            messages=list(messages), max_tokens=max_tokens, stream=True, **kwargs
        )
        return self._answer(chunks)

    def _answer(self, chunks: Iterator[dict[str, Any]]) -> Iterator[Chunk]:
        try:
            yield from _pieces(chunks)
        finally:
            self._free_sampler()

    def _free_sampler(self) -> None:
        """llama-cpp-python makes a sampler chain for every answer and frees it only when
        Python's cycle collector reaches it (its free callback refers to it), which can be
        hundreds of answers later: the process's memory would grow with every answer until
        then. The chain is freed here, at the end of its answer; the next answer makes its own.
        """
        sampler = getattr(self.llama, "_sampler", None)  # no public accessor in 0.3
        if sampler is not None:
            sampler.close()
            self.llama._sampler = None

    def close(self) -> None:
        self.llama.close()


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
        json_schema: dict[str, Any] | None = None,
        sampling: Sampling = CHAT_SAMPLING,
    ) -> Iterator[Chunk]:
        body: dict[str, Any] = {
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
            body["response_format"] = _json_format(json_schema)
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
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
        self, method: str, path: str, body: dict[str, Any] | None, timeout: float
    ) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
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


def load(path: str, options: ProcessOptions) -> Backend:
    """The backend for a runtime path: a server URL, or "embedded" or a GGUF file, which is
    checked here (one sentence at once) and then run in a model process of its own."""
    if path.startswith(("http://", "https://")):
        return OpenAIBackend.load(path, context_tokens=options.n_ctx)
    model = resolve_model_path(path)
    check_gguf(model)
    return ProcessBackend.start(str(model), options)


def _json_format(schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "json_object", "schema": schema}


def _pieces(chunks: Iterator[dict[str, Any]]) -> Iterator[Chunk]:
    try:
        for chunk in chunks:
            choice = chunk["choices"][0]
            text = choice.get("delta", {}).get("content") or ""
            yield text, choice.get("finish_reason")
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()
