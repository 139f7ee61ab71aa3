"""Autonomy earned by track record: the rules over recorded outcomes."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from actions.planners import PlanResult
from agent.loop.track import PROMOTE_AFTER, REJECTS_TO_STOP, UNDOS_TO_STOP, TrackRecord
from state.suggestions import SuggestionStore


@pytest.fixture
def store(tmp_path: Path) -> SuggestionStore:
    return SuggestionStore(tmp_path / "alma.db")


def _record(store: SuggestionStore, auto_kinds: tuple[str, ...] = ()) -> TrackRecord:
    return TrackRecord(store.outcomes(), auto_kinds=auto_kinds)


def test_three_rejections_in_a_folder_stop_the_kind_there_until_lifted(
    store: SuggestionStore,
) -> None:
    for sid in range(1, REJECTS_TO_STOP + 1):
        assert _record(store).stopped("organize", "user/fotos") is None
        store.record_outcome("rejected", "organize", "user/fotos", suggestion_id=sid)
    store.record_outcome("rejected", "organize", "user/otra", suggestion_id=99)
    record = _record(store)
    why = record.stopped("organize", "user/fotos")
    assert why is not None and "3" in why
    assert "alma-ctl autonomy allow organize --folder user/fotos" in why
    assert record.stopped("organize", "user/otra") is None
    assert record.stopped("duplicates", "user/fotos") is None
    store.record_outcome("lifted", "organize", "user/fotos")
    assert _record(store).stopped("organize", "user/fotos") is None


def test_an_outcome_is_recorded_once_per_suggestion(store: SuggestionStore) -> None:
    for _ in range(3):
        store.record_outcome("rejected", "organize", "user/fotos", suggestion_id=1)
    assert _record(store).stopped("organize", "user/fotos") is None
    assert len(store.outcomes()) == 1


def test_two_undos_of_what_ran_on_its_own_stop_the_kind_at_auto(store: SuggestionStore) -> None:
    store.record_outcome("undone", "temp_cleanup", "user", suggestion_id=1, action_id=1, auto=True)
    store.record_outcome("undone", "temp_cleanup", "user", suggestion_id=2, action_id=2)
    assert not _record(store).auto_stopped("temp_cleanup")  # one by ALMA, one by the person
    store.record_outcome("undone", "temp_cleanup", "user", suggestion_id=3, action_id=3, auto=True)
    assert UNDOS_TO_STOP == 2 and _record(store).auto_stopped("temp_cleanup")
    store.record_outcome("lifted", "temp_cleanup", "*")
    assert not _record(store).auto_stopped("temp_cleanup")


def test_accepted_n_times_without_undo_is_promotable_with_the_exact_policy_line(
    store: SuggestionStore,
) -> None:
    for sid in range(1, PROMOTE_AFTER + 1):
        assert _record(store, ("temp_cleanup",)).promotable() == []
        store.record_outcome("accepted", "organize", f"user/d{sid}", suggestion_id=sid)
    (promo,) = _record(store, ("temp_cleanup",)).promotable()
    assert promo["kind"] == "organize" and promo["accepted"] == PROMOTE_AFTER
    assert promo["line"] == 'kinds = ["temp_cleanup", "organize"]'
    assert promo["file"] == "system/autonomy.conf" and promo["section"] == "[auto]"
    # already allowed: nothing to promote; one undo: not trusted yet
    assert _record(store, ("organize",)).promotable() == []
    store.record_outcome("undone", "organize", "user/d1", suggestion_id=1, action_id=5)
    assert _record(store).promotable() == []


def test_the_summary_counts_per_kind_and_per_folder(store: SuggestionStore) -> None:
    store.record_outcome("proposed", "organize", "user/a", suggestion_id=1)
    store.record_outcome("accepted", "organize", "user/a", suggestion_id=1)
    store.record_outcome("useful", "organize", "user/a", suggestion_id=1, reason="¡genial, señor!")
    store.record_outcome("proposed", "organize", "user/b", suggestion_id=2)
    store.record_outcome("rejected", "organize", "user/b", suggestion_id=2, reason="no")
    summary = _record(store).summary()
    (kind,) = summary["kinds"]
    assert kind == {
        "kind": "organize",
        "proposed": 2,
        "accepted": 1,
        "rejected": 1,
        "undone": 0,
        "useful": 1,
        "useless": 0,
    }
    folders = {(f["kind"], f["folder"]): f for f in summary["folders"]}
    assert folders[("organize", "user/b")]["rejected"] == 1
    assert summary["stopped"] == [] and summary["auto_stopped"] == []


def test_feedback_changes_its_mind_the_latest_counts(store: SuggestionStore) -> None:
    store.record_outcome("useful", "organize", "user/a", suggestion_id=1)
    store.record_outcome("useless", "organize", "user/a", suggestion_id=1, reason="no me sirvió")
    (kind,) = _record(store).summary()["kinds"]
    assert (kind["useful"], kind["useless"]) == (0, 1)


def test_stats_reads_for_a_person_with_the_lift_and_the_policy_line(
    store: SuggestionStore,
) -> None:
    from control.views import render_result

    for sid in range(1, REJECTS_TO_STOP + 1):
        store.record_outcome("rejected", "organize", "user/fotos", suggestion_id=sid)
    for sid in range(10, 10 + PROMOTE_AFTER):
        store.record_outcome("accepted", "duplicates", "user", suggestion_id=sid)
    text = render_result("stats", {}, _record(store, ("temp_cleanup",)).summary())
    assert re.search(r"^folder tidying\s+user/fotos\s+0\s+0\s+3\s+0\s+0\s+0$", text, re.M), text
    assert "`alma-ctl autonomy allow organize --folder user/fotos`" in text
    assert 'write kinds = ["temp_cleanup", "duplicates"]' in text


def test_propose_stores_the_suggestion_and_its_proposed_outcome_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SuggestionStore(tmp_path / "alma.db")
    finding = PlanResult(
        kind="organize",
        target="user/descargas",
        title="Ordenar user/descargas",
        reason="20 archivos sueltos",
        evidence=[],
        plan=[],
        files=0,
        fingerprint="f" * 16,
    )
    sid = store.propose(finding, needs_approval=True)
    assert store.row(sid)["status"] == "pending"
    assert [(r["event"], r["suggestion_id"]) for r in store.outcomes()] == [("proposed", sid)]

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(store, "record_outcome", broken)
    with pytest.raises(OSError):  # the outcome fails after the insert: neither stays
        store.propose(replace(finding, fingerprint="g" * 16), needs_approval=True)
    assert [s["id"] for s in store.list(all=True)] == [sid] and len(store.outcomes()) == 1
    store.close()


def test_only_a_kind_the_policy_can_name_is_promoted(store: SuggestionStore) -> None:
    # Five accepted low_mood notices must not propose `kinds = ["temp_cleanup", "low_mood"]`:
    # pasted as told, that line would make autonomy.conf invalid ("unknown kind 'low_mood'"),
    # so the daemon would refuse to start (or a reload keep the old policy).
    from policies.config import policy_from_dict

    for sid in range(1, PROMOTE_AFTER + 1):
        store.record_outcome("accepted", "low_mood", "logs", suggestion_id=sid)
        store.record_outcome("accepted", "duplicates", f"user/d{sid}", suggestion_id=100 + sid)
    promotions = _record(store, ("temp_cleanup",)).promotable()
    assert [p["kind"] for p in promotions] == ["duplicates"]
    for promo in promotions:
        kinds = re.fullmatch(r"kinds = (\[.*\])", promo["line"])
        assert kinds is not None
        policy_from_dict({"auto": {"kinds": json.loads(kinds[1])}})  # the line loads


def _proposed(store: SuggestionStore, kind: str, folder: str, files: int) -> int:
    finding = PlanResult(
        kind=kind,
        target=folder,
        title=f"{kind} {folder}",
        reason="",
        evidence=[],
        plan=[],
        files=files,
        fingerprint=f"fp-{kind}-{folder}-{files}",
    )
    return store.propose(finding, needs_approval=True)


def test_an_undo_holds_the_kind_in_that_folder_until_it_changes_a_great_deal(
    store: SuggestionStore,
) -> None:
    sid = _proposed(store, "organize", "user/Descargas", 20)
    store.record_outcome("accepted", "organize", "user/Descargas", suggestion_id=sid)
    assert _record(store).stopped("organize", "user/Descargas", files=21) is None
    store.record_outcome("undone", "organize", "user/Descargas", suggestion_id=sid, action_id=1)
    record = _record(store)
    why = record.stopped("organize", "user/Descargas", files=21)  # one new file: not news
    assert why is not None and "alma-ctl autonomy allow organize --folder user/Descargas" in why
    assert record.stopped("organize", "user/Descargas", files=2 * 20) is None  # twice as many
    assert record.stopped("organize", "user/otra", files=21) is None
    assert record.stopped("duplicates", "user/Descargas", files=21) is None
    (held,) = record.summary()["stopped"]
    assert held["kind"] == "organize" and held["folder"] == "user/Descargas"
    assert held["lift"] == "alma-ctl autonomy allow organize --folder user/Descargas"
    store.record_outcome("lifted", "organize", "user/Descargas")  # the person asks again
    assert _record(store).stopped("organize", "user/Descargas", files=21) is None
