"""One owner for the zone rule: the policy file's zones are normalised once, and the gate, the
executor and the confinement all ask the same rule whether a path may be written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from policies.config import policy_from_dict
from policies.decide import RunContext
from sandbox.executor import Zones
from state.journal import Journal
from tests.support.engine import AlmaRoot, InProcessEngine

APPROVED = RunContext(approved_by_person=True)


@pytest.mark.parametrize("zone", ["user/", "user//"])
def test_a_zone_written_with_a_slash_works_for_accept(tmp_path: Path, zone: str) -> None:
    """``writable = ["user/"]`` is the zone ``user``: an accept in it works."""
    alma = AlmaRoot(tmp_path).build({"user/a.txt": b"a \xc3\xb1"})
    pol = policy_from_dict({"zones": {"writable": [zone]}, "sandbox": {"allow_unconfined": True}})
    assert pol.zones.writable == ["user"]
    engine = InProcessEngine(alma.layout, Journal(alma.layout.journal_file), lambda: pol)
    try:
        done = engine.execute(
            [alma.move("user/a.txt", "user/b.txt")], kind="organize", ctx=APPROVED
        )
    finally:
        engine.journal.close()
    assert done["status"] == "done"
    assert alma.path("user/b.txt").read_bytes() == b"a \xc3\xb1"


def test_the_executor_asks_the_policys_rule() -> None:
    """The executor's zones and the gate's are the same rule: hard read-only zones included,
    whatever the lists passed."""
    zones = Zones.from_lists(["user/"], [])
    zones.check("user/x")
    for bad in ("system/x", ".alma/x", "logs/x", "user", "userx/y"):
        with pytest.raises(Exception, match="zone"):
            zones.check(bad)


def test_a_zone_through_a_symlinked_parent_is_not_granted_to_the_sandbox(tmp_path: Path) -> None:
    """``writable = ["enlace/zona"]`` with ``enlace`` a symlink to a folder outside the root
    never gives the sandbox that outside folder."""
    alma = AlmaRoot(tmp_path).build()
    (alma.outside / "zona").mkdir()
    (alma.root / "enlace").symlink_to(alma.outside)
    pol = policy_from_dict({"zones": {"writable": ["user", "enlace/zona"]}})
    engine = InProcessEngine(alma.layout, Journal(alma.layout.journal_file), lambda: pol)
    try:
        granted = engine._writable_dirs(pol)
    finally:
        engine.journal.close()
    real_root = os.path.realpath(alma.root)
    assert all(d == real_root or d.startswith(real_root + os.sep) for d in granted), granted
    assert os.path.realpath(alma.root / "user") in granted
