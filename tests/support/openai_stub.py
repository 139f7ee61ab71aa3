"""A stub OpenAI-compatible model server on 127.0.0.1: it answers every chat with exactly the text
it is given, streamed in small pieces as server-sent events, and keeps every request it got.

An honest fake at the model's edge: the daemon talks to it through its real OpenAI-compatible
backend, as it would to ``llama-server`` or Ollama, and a test decides what "the model" says
(an injection attempt, say) and sees what the model was given (the persona, the memories).

Run as ``python -m tests.support.openai_stub ANSWER`` (by a test, as another user) it prints its
URL on the first line, then one JSON line for every request it gets: what a server someone
else started on this machine would learn.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ModelStub:
    """``with ModelStub("text") as stub: ... stub.url ... stub.requests``"""

    def __init__(
        self,
        answer: str,
        *,
        piece: int = 6,
        pause: float = 0.0,
        heard: Callable[[str, dict[str, Any]], None] | None = None,
    ) -> None:
        self.answer = answer
        self.heard = heard  # told every request: its path and its body
        self.piece = piece
        self.pause = pause  # seconds between pieces: a long answer streams for a while
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass  # the test's output is the test's

            def do_GET(self) -> None:
                if stub.heard is not None:
                    stub.heard(self.path, {})
                if self.path.rstrip("/") == "/v1/models":
                    self._json(200, {"object": "list", "data": [{"id": "stub", "object": "model"}]})
                else:
                    self._json(404, {"error": "not found"})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if stub.heard is not None:
                    stub.heard(self.path, body)
                if self.path != "/v1/chat/completions":
                    self._json(404, {"error": "not found"})
                    return
                with stub._lock:
                    stub.requests.append(body)
                if not body.get("stream"):
                    message = {"role": "assistant", "content": stub.answer}
                    choice = {"index": 0, "message": message, "finish_reason": "stop"}
                    self._json(200, {"id": "c", "object": "chat.completion", "choices": [choice]})
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                text = stub.answer
                pieces = [text[i : i + stub.piece] for i in range(0, len(text), stub.piece)]
                try:
                    for i, part in enumerate(pieces):
                        last = i == len(pieces) - 1
                        chunk = {
                            "id": "c",
                            "object": "chat.completion.chunk",
                            "model": "stub",
                            "choices": [
                                {
                                    "index": 0,
                                    "delta": {"content": part},
                                    "finish_reason": "stop" if last else None,
                                }
                            ],
                        }
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                        self.wfile.flush()
                        time.sleep(stub.pause)
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except OSError:
                    pass  # the daemon hung up: a cancel
                self.close_connection = True

            def _json(self, status: int, value: object) -> None:
                data = json.dumps(value).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def prompts_for(self, messages: list[str]) -> list[str]:
        """For each of the person's ``messages``, all the text of the request that answered it
        (the first one whose last message is that message's words)."""
        with self._lock:
            bodies = list(self.requests)
        out = []
        for message in messages:
            for body in bodies:
                turns = body.get("messages") or [{}]
                last = str(turns[-1].get("content", ""))
                # What the chat frames a message with (the memories relevant to it, or that
                # nothing stored answers it) comes before its words, on lines of its own.
                if last == message or last.endswith(f"\n{message}"):
                    out.append("\n".join(str(turn.get("content", "")) for turn in turns))
                    break
            else:
                raise AssertionError(f"the model was never asked {message!r}")
        return out

    def __enter__(self) -> ModelStub:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)


def main() -> None:
    lock = threading.Lock()

    def heard(path: str, body: dict[str, Any]) -> None:
        with lock:
            print(json.dumps({"path": path, "body": body}, ensure_ascii=False), flush=True)

    with ModelStub(sys.argv[1], heard=heard) as stub:
        print(stub.url, flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
