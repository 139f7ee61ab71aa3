"""``alma chat`` scripted (stdin not a terminal) against the real daemon, without any model:
the commands work and a message is answered with how to get a model (contract §7)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.daemon import ALMA_CTL, DaemonRoot

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ALMA = str(Path(ALMA_CTL).parent / "alma")


@pytest.fixture
def alma() -> Iterator[DaemonRoot]:
    d = DaemonRoot().init()
    d.policy(monitor__settle_seconds=0)
    d.set_settings("model", "path", "")  # no model at all
    try:
        yield d
    finally:
        d.close()


def test_without_a_model_the_commands_work_and_the_chat_says_how_to_get_one(
    alma: DaemonRoot,
) -> None:
    alma.messy_folder("user/fotos", n=24)
    alma.start(timeout=120)
    alma.analyze()
    suggestion = alma.wait_suggestion(kind="organize", target="user/fotos", timeout=120)
    done = subprocess.run(
        [ALMA, "chat", "--root", str(alma.root)],
        input=f"hola\n!ver {suggestion['id']}\n!autonomia estado\n!modelo\n",
        capture_output=True,
        text=True,
        env=alma.env,
        timeout=300,
        check=False,
    )
    assert "alma-ctl model use PATH" in done.stdout  # the start says it
    assert suggestion["title"] in done.stdout  # pending, shown at the start, and by !ver
    assert "Plan (" in done.stdout
    assert "alma-ctl model use" in done.stderr  # the message's answer: one sentence
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.returncode == 1  # the message failed (UNAVAILABLE); the commands did not
    assert "\x1b" not in done.stdout
