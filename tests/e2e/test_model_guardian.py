"""The daemon survives whatever its model does: a real daemon whose model process loads a test
backend that fails for real inside that process (tests.support.crashy_model: a SIGSEGV sent to
itself), or is killed from outside with SIGKILL, during a chat, during ``report --refresh`` and
during the analysis at start-up. The daemon stays up, ``status`` answers, the chat gets one
sentence, and the next message is answered by a new process. A model that crashes every time
is given up after two failures and stays given up across restarts: never a crash loop. The
process runs nothing from the folder the daemon was started from, and is confined."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from agent.voice.worker import LOADER_VARIABLE
from control.client import Client
from policies.errors import UnavailableError
from tests.support import crashy_model
from tests.support.daemon import DaemonRoot
from tests.support.wire import obj

pytestmark = pytest.mark.slow

DAY = 86400


@pytest.fixture
def crashy(alma: DaemonRoot, tmp_path: Path) -> Path:
    """The daemon's model process loads the crashy backend; the returned file steers it."""
    control = tmp_path / "control"
    control.write_text("ok", encoding="utf-8")
    alma.extra_env.update(
        {
            LOADER_VARIABLE: "tests.support.crashy_model:load",
            crashy_model.CONTROL: str(control),
            crashy_model.PAUSE: "0.05",
        }
    )
    alma.set_settings("model", "timeout_seconds", 60)
    return control


def client(alma: DaemonRoot) -> Client:
    return Client(alma.socket, 120.0)


def ask(alma: DaemonRoot, session: str, message: str) -> tuple[list[dict[str, Any]], Any]:
    stream = client(alma).stream("chat.send", session=session, message=message)
    events = list(stream)
    return events, stream.result


def model(alma: DaemonRoot) -> dict[str, Any]:
    return obj(alma.ok("model", "status"))


def alive_and_answering(alma: DaemonRoot) -> None:
    assert alma.proc is not None and alma.proc.poll() is None, alma.log()
    assert alma.ok("status")["running"] is True


def _needs_the_model(alma: DaemonRoot) -> None:
    """A script failing three days running with an error no rule can fix: the analysis asks
    the model for a fix."""
    alma.write("user/scripts/backup.sh", b"#!/bin/sh\n. ./backup.conf\nrsync $OPTS ~ /x\n")
    alma.write("user/scripts/backup.conf", b'# opciones\nOPTS="--fast"\n')
    days = [time.strftime("%Y-%m-%d", time.localtime(time.time() - n * DAY)) for n in (3, 2, 1)]
    lines = [f"{d} 02:00:01 ERROR backup.sh: rsync: unknown option --fast" for d in days]
    alma.write("logs/backup.log", ("\n".join(lines) + "\n").encode())


def test_a_segfault_during_a_chat_costs_one_answer(alma: DaemonRoot, crashy: Path) -> None:
    alma.start()
    session = obj(client(alma).call("chat.start"))["session"]
    _events, result = ask(alma, session, "hola")
    assert result["text"] == "eco: hola"
    first = model(alma)["pid"]
    with pytest.raises(UnavailableError, match="SIGSEGV") as raised:
        ask(alma, session, "esto hace SEGV")
    assert "\n" not in raised.value.message  # one sentence
    alive_and_answering(alma)
    _events, result = ask(alma, session, "sigo aquí")
    assert result["text"] == "eco: sigo aquí"
    after = model(alma)
    assert after["pid"] != first and after["state"] == "ready" and after["crashes"] == 0
    assert "SIGSEGV" in after["last_failure"]
    assert alma.stop() == 0


def test_a_sigkill_of_the_model_process_mid_answer(alma: DaemonRoot, crashy: Path) -> None:
    alma.start()
    session = obj(client(alma).call("chat.start"))["session"]
    # Two hundred different words (the same word again and again is a loop the chat cuts).
    words = " ".join(f"palabra{n}" for n in range(200))
    stream = client(alma).stream("chat.send", session=session, message=words)
    killed = threading.Event()
    with pytest.raises(UnavailableError, match="SIGKILL"):
        for event in stream:
            # "pensando": the model has the message; its echo takes 10 s, shown only once the
            # answer's check has read a sentence of it, so the kill does not wait for one.
            if event == {"type": "status", "text": "pensando"} and not killed.is_set():
                time.sleep(1.5)
                os.kill(int(model(alma)["pid"]), signal.SIGKILL)
                killed.set()
    assert killed.is_set()
    alive_and_answering(alma)
    _events, result = ask(alma, session, "otra")
    assert result["text"] == "eco: otra"
    assert alma.stop() == 0


def test_a_segfault_during_report_refresh(alma: DaemonRoot, crashy: Path) -> None:
    today = time.strftime("%Y-%m-%d")
    alma.write(
        f"logs/{today}.md",
        f"# {today}\n\n## 10:00:00 · usuario\nHoy trabajé en la tesis.\n".encode(),
    )
    alma.start()
    crashy.write_text("segv", encoding="utf-8")
    report = alma.ok("report", "--refresh")
    assert report["date"] == today  # written by the rules alone
    alive_and_answering(alma)
    assert "SIGSEGV" in model(alma)["last_failure"]
    crashy.write_text("ok", encoding="utf-8")
    session = obj(client(alma).call("chat.start"))["session"]
    _events, result = ask(alma, session, "hola")
    assert result["text"] == "eco: hola"
    assert alma.stop() == 0


def test_a_segfault_during_the_analysis_at_start_up(alma: DaemonRoot, crashy: Path) -> None:
    _needs_the_model(alma)
    crashy.write_text("segv", encoding="utf-8")
    alma.start()
    alma.wait_suggestion(kind="repeated_failure", target="logs/backup.log")
    alma.wait_for(
        lambda: "SIGSEGV" in str(model(alma).get("last_failure")),
        timeout=60,
        what="the model process's crash to be reported",
    )
    alive_and_answering(alma)
    crashy.write_text("ok", encoding="utf-8")
    session = obj(client(alma).call("chat.start"))["session"]
    _events, result = ask(alma, session, "hola")
    assert result["text"] == "eco: hola"
    assert alma.stop() == 0


def test_a_model_that_crashes_every_time_is_given_up_and_stays_so(
    alma: DaemonRoot, crashy: Path
) -> None:
    _needs_the_model(alma)
    crashy.write_text("segv", encoding="utf-8")  # the probe of every load crashes too
    for start in range(3):
        alma.start()
        status = alma.wait_for(
            lambda: (m := model(alma))["state"] == "unusable" and m,
            timeout=120,
            what="the model to be given up",
        )
        assert "SIGSEGV" in status["unusable"] and "alma-ctl model use" in status["error"]
        assert alma.ok("analyze", "--wait") is not None
        daemon = alma.ok("status")
        assert daemon["running"] is True and daemon["model"]["state"] == "unusable"
        rc = alma.ctl("model", "status", json_out=False)
        assert rc.rc == 0 and "SIGSEGV" in rc.stdout and "alma-ctl model use" in rc.stdout
        if start:  # given up before this start: no process was started at all
            assert "pid" not in status and status["crashes"] == 0
        else:
            assert status["crashes"] == 2
        with pytest.raises(UnavailableError, match="given up"):  # said in the message's language
            session = obj(client(alma).call("chat.start"))["session"]
            ask(alma, session, "hello, how are you?")
        alive_and_answering(alma)
        assert alma.stop() == 0


def test_the_model_process_runs_nothing_from_the_daemons_folder_and_is_confined(
    alma: DaemonRoot, crashy: Path, tmp_path: Path
) -> None:
    planted = tmp_path / "planted"
    planted.mkdir()
    marker = planted / "ran"
    for name in ("agent.py", "queue.py", "json.py"):
        (planted / name).write_text(f"open({str(marker)!r}, 'a').write({name!r})\n")
    alma.cwd = planted
    alma.start()
    session = obj(client(alma).call("chat.start"))["session"]
    _events, result = ask(alma, session, "hola")
    assert result["text"] == "eco: hola"
    status = model(alma)
    pid = int(status["pid"])
    assert "landlock" in status["confined"] and "network denied" in status["confined"]
    assert crashy_model.status_field(pid, "NoNewPrivs") == "1"
    assert crashy_model.status_field(pid, "Seccomp") == "2"
    assert os.readlink(f"/proc/{pid}/cwd") == str(alma.root / ".alma")
    target = alma.root / "user" / "escaped.txt"
    _events, result = ask(alma, session, f"WRITE {target}")
    # The model's own words on it: the answer's check leaves them out (a name no source holds)
    # and logs them as the model wrote them.
    assert not target.exists() and result["dropped"] >= 1
    assert f"WRITE {target} PermissionError" in alma.log()
    shown = alma.ctl("status", json_out=False)
    assert shown.rc == 0 and "model process confined by: landlock" in shown.stdout
    assert not marker.exists(), marker.read_text()
    assert alma.stop() == 0
