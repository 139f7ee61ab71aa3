"""A streamed command's answer in the making: event lines, then exactly one final answer.

A handler of a streamed command (``chat.send``) returns a :class:`StreamReply` at once and
hands it to a producer (the model's worker thread). The producer calls :meth:`emit` for every
event (a token, a status) and ends with :meth:`finish` or :meth:`fail`; the connection thread
forwards what arrives as JSON lines and calls :meth:`cancel` when the person sends
``chat.cancel`` or hangs up. The producer watches :attr:`cancelled` between tokens, so a
generation stops within one token.

A pipe wakes the connection thread, so it can wait on the socket and the producer at once
(``selectors``) and a cancel is seen the moment its line arrives, not at the next token.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import deque
from collections.abc import Callable

from policies.errors import AlmaError

#: What the connection thread takes from a reply: ("event", dict), ("result", value) or
#: ("error", AlmaError).
Item = tuple[str, object]


class StreamReply:
    def __init__(
        self,
        on_cancel: Callable[[], None] | None = None,
        on_last: Callable[[], None] | None = None,
    ) -> None:
        self.cancelled = threading.Event()
        self._on_cancel = on_cancel
        # Told before the final answer can reach the client: whatever the client does once it
        # has read it (a next request) finds the producer's side already knowing.
        self._on_last = on_last
        self._items: deque[Item] = deque()
        self._lock = threading.Lock()
        self._done = False
        self._closed = False
        self._wake_r, self._wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)

    # ---------------------------------------------------------------- producer side

    def emit(self, event: dict[str, object]) -> None:
        """One event line, e.g. ``{"type": "token", "text": "Hola"}``."""
        self._put(("event", event), last=False)

    def finish(self, result: object) -> None:
        """The final answer; nothing may be emitted after it."""
        self._put(("result", result), last=True)

    def fail(self, error: AlmaError) -> None:
        """The final answer is this error."""
        self._put(("error", error), last=True)

    @property
    def done(self) -> bool:
        return self._done

    def _put(self, item: Item, *, last: bool) -> None:
        if last and self._on_last is not None:
            self._on_last()
        with self._lock:
            if self._done:
                raise RuntimeError("a StreamReply got an item after its final answer")
            self._done = last
            self._items.append(item)
            if not self._closed:
                with contextlib.suppress(BlockingIOError):  # a full pipe is already awake
                    os.write(self._wake_w, b"x")

    # ---------------------------------------------------------------- connection side

    def fileno(self) -> int:
        """Readable when items are waiting (for ``selectors``)."""
        return self._wake_r

    def take(self) -> list[Item]:
        """Every item waiting now, in order."""
        with self._lock:
            with contextlib.suppress(BlockingIOError):
                while os.read(self._wake_r, 4096):
                    pass
            items = list(self._items)
            self._items.clear()
            return items

    def cancel(self) -> None:
        """Ask the producer to stop; it still sends its final answer (``stopped: cancelled``)."""
        if self.cancelled.is_set():
            return
        self.cancelled.set()
        if self._on_cancel is not None:
            self._on_cancel()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            os.close(self._wake_r)
            os.close(self._wake_w)
