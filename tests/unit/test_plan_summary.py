"""A long plan read as its summary and first ops: actions.summary, and how alma-ctl shows it
(``suggestions show``: summary by default, ``--all`` every op, ``--json`` the contract)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from actions.summary import FIRST_OPS, TOP, WHOLE_UP_TO, plan_summary, shown
from control.chat_commands import Run, parse_line
from control.protocol import socket_path_for
from control.server import ControlServer
from tests.unit.test_control_server import FakeDispatcher
from tests.unit.test_ctl import SUGGESTION, root, run, spanish  # noqa: F401  # fixtures

N = 100_000
EXTS = ("jpg", "pdf", "mp3", "csv", "txt")


def big_plan(n: int = N) -> list[dict[str, Any]]:
    """An organize plan of ``n`` ops: 5 mkdirs, then moves by type into them."""
    plan: list[dict[str, Any]] = [{"op": "mkdir", "path": f"user/d/{e}"} for e in EXTS]
    for i in range(n - len(EXTS)):
        ext = EXTS[i % len(EXTS)]
        plan.append({"op": "move", "src": f"user/d/f{i}.{ext}", "dst": f"user/d/{ext}/f{i}.{ext}"})
    return plan


def test_the_summary_counts_ops_folders_and_types() -> None:
    plan = [
        {"op": "mkdir", "path": "user/x/images"},
        {"op": "move", "src": "user/x/a.JPG", "dst": "user/x/images/a.JPG"},
        {"op": "move", "src": "user/x/b.jpg", "dst": "user/x/images/b.jpg"},
        {"op": "trash", "path": "user/x/c.tmp"},
        {"op": "trash", "path": "user/x/Makefile"},
        {"op": "trash", "path": "user/x/.bashrc"},
    ]
    assert plan_summary(plan) == {
        "ops": {"mkdir": 1, "move": 2, "trash": 3},
        "folders": [
            {"op": "trash", "folder": "user/x", "files": 3},
            {"op": "move", "folder": "user/x/images", "files": 2},
        ],
        "folders_more": 0,
        "extensions": [
            {"extension": "", "files": 2},
            {"extension": ".jpg", "files": 2},
            {"extension": ".tmp", "files": 1},
        ],
        "extensions_more": 0,
    }


def test_the_summary_keeps_the_largest_and_counts_the_rest() -> None:
    plan = [{"op": "trash", "path": f"user/f{i}/a.e{i}"} for i in range(TOP + 7)]
    plan += [{"op": "trash", "path": "user/f0/b.e0"}]
    summary = plan_summary(plan)
    assert len(summary["folders"]) == TOP and summary["folders_more"] == 7
    assert summary["folders"][0] == {"op": "trash", "folder": "user/f0", "files": 2}
    assert len(summary["extensions"]) == TOP and summary["extensions_more"] == 7


def test_shown_cuts_a_long_plan_only_when_asked() -> None:
    suggestion = {**SUGGESTION, "plan": big_plan(WHOLE_UP_TO + 1)}
    cut = shown(suggestion, all_ops=False)
    assert cut["plan"] == suggestion["plan"][:FIRST_OPS] and cut["plan_total"] == WHOLE_UP_TO + 1
    whole = shown(suggestion, all_ops=True)
    assert whole["plan"] == suggestion["plan"] and whole["plan_total"] == WHOLE_UP_TO + 1
    assert whole["plan_summary"] == cut["plan_summary"]
    short = shown({**SUGGESTION, "plan": big_plan(WHOLE_UP_TO)}, all_ops=False)
    assert len(short["plan"]) == WHOLE_UP_TO == short["plan_total"]
    assert suggestion["plan"] == big_plan(WHOLE_UP_TO + 1)  # the stored one is not changed


@pytest.fixture
def size(request: pytest.FixtureRequest) -> int:
    return int(getattr(request, "param", 5_000))


@pytest.fixture
def fake(size: int) -> FakeDispatcher:
    fake = FakeDispatcher()
    stored = {**SUGGESTION, "files": size - len(EXTS), "plan": big_plan(size)}
    fake.results["suggestions.show"] = lambda args: shown(stored, all_ops=bool(args["all"]))
    return fake


@pytest.fixture
def daemon(root: Path, fake: FakeDispatcher) -> Iterator[ControlServer]:  # noqa: F811
    with ControlServer(socket_path_for(root), fake) as server:
        yield server


@pytest.mark.usefixtures("daemon")
@pytest.mark.parametrize("size", [5_000, pytest.param(N, marks=pytest.mark.slow)], indirect=True)
def test_show_of_a_long_plan_is_a_summary_unless_all_is_asked(
    capsys: pytest.CaptureFixture[str],
    root: Path,  # noqa: F811
    fake: FakeDispatcher,
    size: int,
) -> None:
    r = ["--root", str(root)]
    per_type = (size - len(EXTS)) // len(EXTS)
    code, out, _ = run(capsys, *r, "suggestions", "show", "3")
    assert code == 0 and fake.calls[-1] == ("suggestions.show", {"id": 3, "all": False})
    lines = out.splitlines()
    assert len(lines) < 60, out
    assert f"Plan ({size} ops): 5 mkdir, {size - 5} move" in lines
    assert "  By folder:" in lines and "  By type:" in lines
    assert not any(line.startswith(("  plan total", "  plan summary")) for line in lines)
    assert f"    move     {per_type:>9}  user/d/jpg" in lines
    assert f"    .jpg     {per_type:>9}" in lines
    assert "The first 20 ops:" in lines
    assert lines[-2].strip().startswith("20. move     user/d/f14.txt -> user/d/txt/f14.txt")
    assert lines[-1] == f"`alma-ctl suggestions show 3 --all` prints all {size} ops."

    code, out, _ = run(capsys, *r, "suggestions", "show", "3", "--all")
    assert code == 0 and fake.calls[-1] == ("suggestions.show", {"id": 3, "all": True})
    lines = out.splitlines()
    assert f"Plan ({size} ops):" in lines
    assert sum(1 for line in lines if " move " in line) == size - len(EXTS)
    assert lines[-1].strip() == (
        f"{size}. move     user/d/f{size - 6}.txt -> user/d/txt/f{size - 6}.txt"
    )

    code, out, _ = run(capsys, *r, "--json", "suggestions", "show", "3")
    assert code == 0 and fake.calls[-1] == ("suggestions.show", {"id": 3, "all": True})
    data = json.loads(out)
    assert data["plan"] == big_plan(size) and data["plan_total"] == size  # the contract
    assert data["plan_summary"]["ops"] == {"mkdir": 5, "move": size - 5}


@pytest.mark.usefixtures("daemon", "spanish")
def test_the_summary_in_spanish(
    capsys: pytest.CaptureFixture[str],
    root: Path,  # noqa: F811
) -> None:
    code, out, _ = run(capsys, "--root", str(root), "suggestions", "show", "3")
    assert code == 0
    lines = out.splitlines()
    assert "Plan (5000 ops): 5 crear, 4995 mover" in lines, out
    assert "  Por carpeta:" in lines and "  Por tipo:" in lines
    assert "    mover          999  user/d/jpg" in lines
    assert "Las primeras 20 ops:" in lines
    assert lines[-1] == "`alma-ctl suggestions show 3 --all` muestra las 5000 ops."


def test_the_chat_shows_a_plan_as_alma_ctl_does() -> None:
    decision = parse_line("!ver 3")
    assert isinstance(decision, Run)
    assert (decision.cmd, decision.args) == ("suggestions.show", {"id": 3, "all": False})


def test_shown_reads_a_plan_once_as_it_comes_and_keeps_only_what_it_shows() -> None:
    # `suggestions show` of 100,000 ops held every op as a dict to summarize them: the store's
    # plan now comes one op at a time, and only the ops shown are kept.
    given = [0]

    def stored() -> Iterator[dict[str, str]]:
        for op in big_plan(10_000):
            given[0] += 1
            yield op

    cut = shown({**SUGGESTION, "plan": stored()}, all_ops=False)
    assert given[0] == len(big_plan(10_000)) and cut["plan_total"] == given[0]
    assert cut["plan"] == big_plan(10_000)[:FIRST_OPS]
    assert cut["plan_summary"] == plan_summary(big_plan(10_000))
    whole = shown({**SUGGESTION, "plan": iter(big_plan(150))}, all_ops=True)
    assert whole["plan"] == big_plan(150) and whole["plan_total"] == len(big_plan(150))
