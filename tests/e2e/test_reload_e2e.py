"""The policy read again without a signal: ``alma-ctl reload``, and an edit of
``system/autonomy.conf`` noticed by the daemon's watcher. ``status`` says when the policy in
force was loaded, and while the file is not valid, why (the last good policy stays)."""

from __future__ import annotations

import time

import pytest

from tests.support.daemon import DaemonRoot

pytestmark = pytest.mark.e2e

BROKEN = ("approval_files = 20", "approval_files = 20\napproval_file = 5")


@pytest.fixture
def spanish(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANG", "es_ES.UTF-8")  # the daemon and every alma-ctl below


@pytest.mark.usefixtures("spanish")
def test_alma_ctl_reload_reads_the_policy_and_names_what_needs_a_restart(
    alma: DaemonRoot,
) -> None:
    alma.start()
    good = alma.policy_file.read_text(encoding="utf-8")
    started = alma.ok("status")["policy"]
    assert started["ok"] is True and started["loaded_at"]

    time.sleep(1.1)  # loaded_at has whole seconds: a reload is seen as a later one
    alma.set_settings("schedule", "rescan_minutes", 7)
    answer = alma.ctl("reload", json_out=False).ok().stdout
    assert f"Política recargada desde {alma.policy_file}." in answer
    assert (
        "aplicado solo tras reiniciar" in answer and "alma.toml: schedule.rescan_minutes" in answer
    )
    status = alma.ok("status")["policy"]
    assert status["ok"] is True and status["loaded_at"] > started["loaded_at"]

    alma.policy_file.write_text(good.replace(*BROKEN), encoding="utf-8")
    answer = alma.ctl("reload", json_out=False).ok().stdout
    assert answer.startswith("La política no se recargó:"), answer
    assert "thresholds.approval_file" in answer
    human = alma.ctl("status", json_out=False).ok().stdout
    assert f"Política: {alma.policy_file}, NO es válida tal como está ahora." in human
    assert "thresholds.approval_file" in human
    assert alma.ok("status")["policy"]["ok"] is False
    alma.stop()


@pytest.mark.usefixtures("spanish")
def test_an_edit_of_the_policy_is_noticed_without_reload(alma: DaemonRoot) -> None:
    alma.start()
    good = alma.policy_file.read_text(encoding="utf-8")
    before = alma.ok("status")["policy"]
    assert before["ok"] is True

    # A bad edit, in place: status says so within seconds, nobody sent anything.
    alma.policy_file.write_text(good.replace(*BROKEN), encoding="utf-8")
    policy = alma.wait_for(
        lambda: (p := alma.ok("status")["policy"])["ok"] is False and p,
        timeout=15,
        what="status to report the bad edit",
    )
    assert "thresholds.approval_file" in policy["error"]
    assert (
        f"Sigue en vigor la última política buena (cargada {before['loaded_at']})."
        in (policy["error"])
    )
    assert alma.ok("autonomy", "status")["configured"] == "suggest"

    # Fixed the way editors save, a new file renamed over the old, and lowered to see it act.
    time.sleep(1.1)
    fixed = alma.policy_file.with_name(".autonomy.conf.swp")
    fixed.write_text(good.replace('level = "suggest"', 'level = "manual"'), encoding="utf-8")
    fixed.replace(alma.policy_file)
    alma.wait_for(
        lambda: alma.ok("status")["policy"]["ok"] is True,
        timeout=15,
        what="status to report the fixed policy",
    )
    status = alma.ok("status")
    assert status["policy"]["loaded_at"] > before["loaded_at"]
    assert status["autonomy"]["configured"] == "manual"
    human = alma.ctl("status", json_out=False).ok().stdout
    assert f"Política: {alma.policy_file}, válida, cargada " in human
    assert "Autonomía: manual, como dice la política." in human
    alma.stop()
