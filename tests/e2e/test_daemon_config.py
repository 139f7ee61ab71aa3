"""A malformed ``system/autonomy.conf``: the daemon says what is wrong and how to fix it.

At start the daemon refuses, exits non-zero, and says on stderr which file, which line and (when
the file parses) which key, and the fix. On SIGHUP it keeps the last good policy, and
``alma-ctl status --json`` says why in ``policy.ok``/``policy.error``; fixing the file and
sending SIGHUP again clears it.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.support.daemon import DaemonRoot

pytestmark = pytest.mark.e2e

Edit = Callable[[str], str]


def _replace(old: str, new: str) -> Edit:
    def edit(text: str) -> str:
        assert old in text, f"{old!r} is not in the default policy"
        return text.replace(old, new, 1)

    return edit


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


CASES = {
    # name: (edit, the text of the line it makes wrong, the key named, or None)
    "unknown key": (
        _replace("[monitor]\n", "[monitor]\nsettle_secs = 0\n"),
        "settle_secs = 0",
        "monitor.settle_secs",
    ),
    "wrong type": (
        _replace("max_files = 2000", 'max_files = "many"'),
        'max_files = "many"',
        "thresholds.max_files",
    ),
    "impossible value": (
        _replace('level = "suggest"', 'level = "turbo"'),
        'level = "turbo"',
        "level",
    ),
    # Not TOML at all: the parser gives the line (and column), no key can be known yet.
    "bad TOML": (
        _replace('level = "suggest"', "level = suggest"),
        "level = suggest",
        None,
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_malformed_policy_stops_the_daemon_naming_file_line_and_key(
    alma: DaemonRoot, case: str
) -> None:
    edit, bad_line, key = CASES[case]
    text = edit(alma.policy_file.read_text(encoding="utf-8"))
    alma.policy_file.write_text(text, encoding="utf-8")
    proc = alma.spawn()
    assert proc.wait(timeout=60) != 0
    message = alma.log()
    assert str(alma.policy_file) in message
    assert f"line {_line_of(text, bad_line)}" in message, message
    if key is not None:
        assert f"key {key}" in message, message
    assert "Traceback" not in message
    assert len(message.strip().splitlines()) == 1, message  # one plain sentence
    assert alma.ctl("status").rc == 3  # it never opened its socket


def test_sighup_with_a_broken_policy_keeps_the_last_good_one_and_status_says_why(
    alma: DaemonRoot,
) -> None:
    alma.start()
    good = alma.policy_file.read_text(encoding="utf-8")
    status = alma.ok("status")
    assert status["policy"] == {
        "file": str(alma.policy_file),
        "ok": True,
        "loaded_at": status["policy"]["loaded_at"],
        "error": None,
    }

    # Broken, and asking for a lower level: neither part may take effect.
    broken = good.replace('level = "suggest"', 'level = "manual"').replace(
        "approval_files = 20", "approval_files = 20\napproval_file = 5"
    )
    alma.policy_file.write_text(broken, encoding="utf-8")
    alma.hup()
    policy = alma.wait_for(
        lambda: (p := alma.ok("status")["policy"])["ok"] is False and p,
        timeout=30,
        what="status to report the broken policy",
    )
    assert "thresholds.approval_file" in policy["error"]
    assert f"line {_line_of(broken, 'approval_file = 5')}" in policy["error"]
    assert "last good policy" in policy["error"]
    assert alma.ok("autonomy", "status")["configured"] == "suggest"
    # The last good policy is the one in force: level suggest proposes on file events.
    alma.messy_folder("user/tras-hup", 20)
    alma.wait_suggestion(kind="organize", target="user/tras-hup")

    # Another reload with a file that is not TOML: still the same last good policy.
    alma.policy_file.write_text(good.replace('level = "suggest"', "level = "), encoding="utf-8")
    alma.hup()
    alma.wait_for(
        lambda: "TOML" in (alma.ok("status")["policy"]["error"] or ""),
        timeout=30,
        what="status to report the policy that is not TOML",
    )
    assert alma.ok("autonomy", "status")["configured"] == "suggest"

    # Fixed (and lowered, to see the reload take effect): the error clears.
    alma.policy_file.write_text(good.replace('level = "suggest"', 'level = "manual"'))
    alma.hup()
    alma.wait_for(
        lambda: alma.ok("status")["policy"]["ok"] is True,
        timeout=30,
        what="status to report the fixed policy",
    )
    status = alma.ok("status")
    assert status["policy"]["error"] is None
    assert status["autonomy"]["configured"] == "manual"
    assert status["autonomy"]["effective"] == "manual"
    alma.stop()
