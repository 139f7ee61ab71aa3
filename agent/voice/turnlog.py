"""Appending chat turns to ``logs/YYYY-MM-DD.md`` (contract §6), safely.

The daemon is the one writer (a lock here; the chat's turns all go through its model worker);
the person may add notes by hand, so each write is one ``O_APPEND`` write of whole turns. The
file is opened through the logs folder's fd with ``O_NOFOLLOW``: a symlink planted as today's
log (toward system/ or outside the root) is refused, never followed, and so is a logs folder
that is a symlink. The text is formatted by the one format module, state.chatlog.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
from datetime import datetime

from control.render import printable
from policies.layout import RootLayout
from policies.modes import PRIVATE_FILE
from state.chatlog import ASSISTANT, PERSON, file_name, format_day, format_turn

log = logging.getLogger("alma.chat")
_lock = threading.Lock()


def append_exchange(
    layout: RootLayout,
    *,
    asked_at: datetime,
    question: str,
    answered_at: datetime,
    answer: str,
    model: str,
    tokens: int,
    ms: int,
    stopped: str = "done",
) -> bool:
    """Append the person's turn and ALMA's to the log of the day the person asked; False (and
    a log line) when it cannot be written safely. Times are local. Control characters are
    written escaped, as the chat's screen shows them: the log is read in a terminal too."""
    day = asked_at.date()
    text = format_turn(asked_at, PERSON, printable(question))
    text += format_turn(
        answered_at,
        ASSISTANT,
        printable(answer),
        model=model,
        tokens=tokens,
        ms=ms,
        stopped=stopped,
    )
    try:
        with _lock:
            _append(layout, file_name(day), format_day(day), text.encode("utf-8"))
    except OSError as exc:
        log.error("chat turn not logged to logs/%s: %s", file_name(day), exc.strerror or exc)
        return False
    return True


def _append(layout: RootLayout, name: str, heading: str, data: bytes) -> None:
    dir_fd = os.open(layout.logs, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(name, flags | os.O_NONBLOCK, PRIVATE_FILE, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):  # a FIFO or a device planted as today's log
            raise OSError(0, f"{name} is not a regular file")
        if info.st_size == 0:
            data = heading.encode("utf-8") + data
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
