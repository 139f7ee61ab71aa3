"""The policy file and the decision gate."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from actions.safe_read import read_config
from policies.config import Policy, load_policy, policy_from_dict
from policies.decide import PlanFacts, RunContext, Verdict, decide, path_zone_problem
from policies.defaults import DEFAULT_POLICY_TOML
from policies.errors import ConfigError


def load(path: Path) -> Policy:
    """The policy as the daemon loads it: the file read the one safe way, then built."""
    return load_policy(path, read_config(path))


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "autonomy.conf"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_default_file_is_valid_and_matches_the_contract(tmp_path: Path) -> None:
    policy = load(write(tmp_path, DEFAULT_POLICY_TOML))
    assert policy.level == "suggest"
    assert policy.zones.writable == ["user"]
    assert policy.zones.read_only == ["system", "logs", "docs"]
    assert policy.thresholds.approval_files == 20
    assert policy.thresholds.max_files == 2000
    assert policy.auto.kinds == ["temp_cleanup"]
    assert policy.monitor.settle_seconds == 120
    assert policy.monitor.messy_folder_files == 15


@pytest.mark.parametrize(
    ("old", "new", "key", "marker", "fix"),
    [
        (
            "approval_files = 20",
            'approval_files = "20"',
            "thresholds.approval_files",
            "approval_files =",
            "without quotes",
        ),
        ('level = "suggest"', 'level = "yolo"', "level", "level =", "one of"),
        (
            "settle_seconds = 120",
            "settle_seconds = 120\nsetle = 3",
            "monitor.setle",
            "setle =",
            "spelling",
        ),
        (
            "settle_seconds = 120",
            "settle_seconds = -1",
            "monitor.settle_seconds",
            "settle_seconds =",
            "larger",
        ),
        (
            'writable = ["user"]',
            'writable = ["system/x"]',
            "zones.writable",
            "writable =",
            "read-only",
        ),
        ('writable = ["user"]', 'writable = ["../fuera"]', "zones.writable", "writable =", "'..'"),
        (
            'writable = ["user"]',
            'writable = [".alma"]',
            "zones.writable",
            "writable =",
            "read-only",
        ),
        ('writable = ["user"]', 'writable = ["/home"]', "zones.writable", "writable =", "relative"),
        (
            'kinds = ["temp_cleanup"]',
            'kinds = ["borrar_todo"]',
            "auto.kinds",
            "kinds =",
            "unknown kind",
        ),
        ("max_files = 2000", "max_files = 10", "thresholds", "[thresholds]", "smaller"),
    ],
)
def test_a_wrong_value_names_file_line_key_and_fix(
    tmp_path: Path, old: str, new: str, key: str, marker: str, fix: str
) -> None:
    assert old in DEFAULT_POLICY_TOML
    text = DEFAULT_POLICY_TOML.replace(old, new, 1)
    path = write(tmp_path, text)
    line = line_of(text, marker)
    with pytest.raises(ConfigError) as err:
        load(path)
    message = str(err.value)
    assert str(path) in message
    assert f"key {key}" in message
    assert f"line {line}" in message
    assert fix in message
    assert "\n" not in message and "Traceback" not in message


def line_of(text: str, marker: str) -> int:
    """The 1-based line where ``marker`` starts a line (comments skipped)."""
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith(marker):
            return number
    raise AssertionError(f"{marker!r} not in the file")


def test_bad_toml_names_the_line(tmp_path: Path) -> None:
    text = DEFAULT_POLICY_TOML.replace("\n[auto]\n", "\n[auto\n", 1)
    path = write(tmp_path, text)
    with pytest.raises(ConfigError, match=rf"not valid TOML.*line {line_of(text, '[auto')}"):
        load(path)


def test_a_missing_file_says_to_run_init(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="alma-ctl init"):
        load(tmp_path / "autonomy.conf")


def test_the_policy_is_the_text_read_once_even_if_saved_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file is read once: what was checked is what is built. It was read a second time
    (pydantic's TOML source) to build the policy, so a save between the two reads (a SIGHUP
    reload while the person edits) built a policy nobody checked, or raised a raw TOML error
    out of the reload, which catches ConfigError, into the daemon's main loop."""
    from policies import config

    path = write(tmp_path, DEFAULT_POLICY_TOML)
    real = config.parse_toml

    def parse_then_saved(p: Path, text: str) -> dict[str, object]:
        out = real(p, text)
        p.write_text('level = "auto"\n[zones\n', encoding="utf-8")  # saved, half written
        return out

    monkeypatch.setattr(config, "parse_toml", parse_then_saved)
    assert load(path).level == "suggest"


def test_environment_never_changes_the_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEVEL", "auto")
    monkeypatch.setenv("level", "auto")
    assert load(write(tmp_path, DEFAULT_POLICY_TOML)).level == "suggest"


def test_spanish_text_in_comments_is_fine(tmp_path: Path) -> None:
    text = "# Política de ALMA: año, niño, acción\n" + DEFAULT_POLICY_TOML
    assert load(write(tmp_path, text)).level == "suggest"


# -- zones ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "path",
    [
        "user2/a.txt",  # look-alike of user
        "users/a.txt",
        "system/autonomy.conf",
        ".alma/alma.db",
        "logs/2026-11-22.md",
        "docs/a.md",
        "user",  # the zone itself is never a target
        "user/../system/x",
        "/etc/passwd",
        "",
        "user//a",
        "user/./a",
    ],
)
def test_paths_outside_the_writable_zones_are_refused(path: str) -> None:
    assert path_zone_problem(policy_from_dict({}), path) is not None


def test_paths_inside_a_writable_zone_pass() -> None:
    policy = policy_from_dict({})
    assert path_zone_problem(policy, "user/a.txt") is None
    assert path_zone_problem(policy, "user/proyecto ñ/ácido.jpg") is None


def test_a_read_only_zone_inside_a_writable_one_wins() -> None:
    policy = policy_from_dict({"zones": {"writable": ["user"], "read_only": ["user/privado"]}})
    assert path_zone_problem(policy, "user/privado/x") is not None
    assert path_zone_problem(policy, "user/privadox/x") is None


def _reference_zone_problem(policy: Policy, relpath: str) -> bool:
    """The zone rule by components, as written first: what ZoneCheck's string prefixes match."""
    if not relpath or relpath.startswith("/"):
        return True
    parts = relpath.split("/")
    if any(p in ("", ".", "..") or "\x00" in p for p in parts):
        return True
    if any(tuple(parts[: len(ro)]) == ro for ro in policy.zones.read_only_parts()):
        return True
    return not any(
        len(parts) > len(zone) and tuple(parts[: len(zone)]) == zone
        for zone in policy.zones.writable_parts()
    )


#: Paths built from zone names, look-alikes and bad components, and read-only zones to test with.
ZONE_PATHS = st.lists(
    st.sampled_from(["user", "privado", "privadox", "docs", "a", ".", "..", "", "x\x00", "ñ"]),
    min_size=1,
    max_size=4,
).map("/".join)
READ_ONLY_ZONES = st.sampled_from([[], ["user/privado"], ["docs"]])


@settings(max_examples=1500, deadline=None)
@given(ZONE_PATHS, READ_ONLY_ZONES)
def test_zone_check_matches_the_component_rule(path: str, read_only: list[str]) -> None:
    policy = policy_from_dict({"zones": {"writable": ["user", "docs/x"], "read_only": read_only}})
    assert (path_zone_problem(policy, path) is not None) == _reference_zone_problem(policy, path)


# -- decide --------------------------------------------------------------------------------
def facts(
    kind: str = "temp_cleanup", files: int = 3, paths: tuple[str, ...] = ("user/a.tmp",)
) -> PlanFacts:
    return PlanFacts(kind=kind, paths=paths, files=files)


AUTO = policy_from_dict({"level": "auto"})


def test_auto_runs_an_allowed_kind_under_the_threshold() -> None:
    ctx = RunContext(approved_by_person=False, effective_level="auto")
    assert decide(AUTO, facts(), ctx).verdict is Verdict.ALLOW


@pytest.mark.parametrize(
    ("ctx", "kind", "files"),
    [
        (RunContext(approved_by_person=False, effective_level="suggest"), "temp_cleanup", 3),
        (RunContext(approved_by_person=False, effective_level="auto"), "organize", 3),
        (RunContext(approved_by_person=False, effective_level="auto"), "temp_cleanup", 21),
        (
            RunContext(approved_by_person=False, effective_level="auto", paused=True),
            "temp_cleanup",
            3,
        ),
        (
            RunContext(
                approved_by_person=False,
                effective_level="auto",
                auto_disabled_kinds=frozenset({"temp_cleanup"}),
            ),
            "temp_cleanup",
            3,
        ),
    ],
)
def test_otherwise_a_person_decides(ctx: RunContext, kind: str, files: int) -> None:
    decision = decide(AUTO, facts(kind=kind, files=files), ctx)
    assert decision.verdict is Verdict.ASK
    assert decision.reason


def test_over_approval_files_waits_for_a_person_at_any_level_but_runs_when_approved() -> None:
    for level in ("auto", "suggest", "manual", "off"):
        ctx = RunContext(approved_by_person=False, effective_level=level)  # type: ignore[arg-type]  # each level is a valid Level; the loop variable is a str
        assert decide(AUTO, facts(files=21), ctx).verdict is Verdict.ASK
    person = RunContext(approved_by_person=True)
    assert decide(AUTO, facts(files=21), person).verdict is Verdict.ALLOW


def test_over_max_files_is_refused_even_with_approval() -> None:
    decision = decide(AUTO, facts(files=2001), RunContext(approved_by_person=True))
    assert decision.verdict is Verdict.REFUSE
    assert "max_files" in decision.reason


def test_a_path_outside_the_zones_is_refused_even_with_approval() -> None:
    decision = decide(
        AUTO, facts(paths=("user/a", "system/autonomy.conf")), RunContext(approved_by_person=True)
    )
    assert decision.verdict is Verdict.REFUSE
    assert "system" in decision.reason


@settings(max_examples=1500, deadline=None)
@given(ZONE_PATHS, READ_ONLY_ZONES)
def test_the_executors_zone_check_matches_the_component_rule(
    path: str, read_only: list[str]
) -> None:
    # The confined executor checks the zones again, with its own copy of the rule.
    from policies.errors import RefusedError
    from sandbox.executor import Zones

    policy = policy_from_dict({"zones": {"writable": ["user", "docs/x"], "read_only": read_only}})
    zones = Zones.from_lists(policy.zones.writable, policy.zones.read_only)
    try:
        zones.check(path)
        refused = False
    except RefusedError:
        refused = True
    assert refused == _reference_zone_problem(policy, path)
