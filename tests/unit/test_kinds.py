"""The kinds registry (policies.kinds): every kind declared once, and nothing else spells one.

The scans read the production code as it is: a kind a detector or an action carries without an
entry, or a row's kind compared with a word no entry declares, fails here.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.loop.budget import protects, worth
from control.views import render_result
from policies import kinds
from policies.config import policy_from_dict
from policies.errors import ConfigError
from policies.i18n import language
from policies.kinds import AUTO_KINDS, KINDS, RECORD_KINDS, Kind

REPO = Path(__file__).resolve().parents[2]
PRODUCTION = ("agent", "actions", "policies", "sandbox", "state", "control")
#: Calls that give a suggestion or an action its kind, and where the kind goes.
_CARRIERS = {"PlanResult": "kind", "create_action": "kind", "PlanFacts": "kind"}
#: Other vocabularies read from a field named "kind": the memory store's records.
_NOT_SUGGESTIONS = frozenset({"turn"})


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for package in PRODUCTION:
        for path in sorted((REPO / package).rglob("*.py")):
            name = ".".join(path.relative_to(REPO).with_suffix("").parts)
            yield name.removesuffix(".__init__"), ast.parse(path.read_text(), str(path))


def _constants(tree: ast.Module) -> dict[str, str]:
    """The module's top-level ``NAME = "text"``."""
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            for target in node.targets:
                if isinstance(target, ast.Name) and isinstance(node.value.value, str):
                    out[target.id] = node.value.value
    return out


def _imports(tree: ast.Module) -> dict[str, tuple[str, str | None]]:
    """Local name -> (module, name in it) for ``from m import n``; (module, None) for a module."""
    out: dict[str, tuple[str, str | None]] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                out[alias.asname or alias.name] = (node.module, alias.name)
    return out


def _carried() -> tuple[dict[str, str], list[str]]:
    """Every kind a finding or an action is given in the code -> where; and where a kind is
    made of pieces no scan can read (a kind passed on from an argument or a row is read where
    it was first given)."""
    modules = dict(_modules())
    consts = {name: _constants(tree) for name, tree in modules.items()}
    found: dict[str, str] = {}
    unread: list[str] = []

    def resolve(module: str, node: ast.expr) -> str | None:
        imports = _imports(modules[module])
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in consts[module]:
                return consts[module][node.id]
            source, name = imports.get(node.id, ("", None))
            return consts.get(source, {}).get(name or "")
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            source, name = imports.get(node.value.id, ("", None))
            return consts.get(f"{source}.{name}", {}).get(node.attr)
        return None

    for module, tree in modules.items():
        for name, value in consts[module].items():
            if name == "KIND" or name.endswith("_KIND"):
                found[value] = f"{module}.{name}"
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            for keyword in node.keywords:
                if called not in _CARRIERS or keyword.arg != _CARRIERS[called]:
                    continue
                value = resolve(module, keyword.value)
                if value is not None:
                    found.setdefault(value, f"{module}:{node.lineno}")
                elif isinstance(keyword.value, ast.JoinedStr | ast.BinOp | ast.IfExp):
                    unread.append(f"{module}:{node.lineno}")  # a kind made of pieces
            if called == "fingerprint" and node.args:  # its first argument is the kind
                value = resolve(module, node.args[0])
                if value is not None:
                    found.setdefault(value, f"{module}:{node.lineno}")
    return found, unread


def test_every_kind_the_code_carries_has_an_entry() -> None:
    found, unread = _carried()
    # The scan itself reads the detectors: a broken scan cannot pass as "nothing missing".
    assert {"organize", "routine", "low_mood", "autonomy_promotion", "backup_restore"} <= set(found)
    missing = {kind: where for kind, where in found.items() if kind not in KINDS}
    assert missing == {}, "add an entry to policies.kinds for each"
    assert unread == []


def test_every_kind_a_row_is_compared_with_has_an_entry() -> None:
    """``row["kind"] == "backup"`` in a view or a loop reads a kind by its name: the name must
    be the registry's, or a rename leaves a branch that never runs."""
    spelled: dict[str, str] = {}
    for module, tree in _modules():
        if module.startswith("actions."):  # a file's kind there (file, dir, symlink)
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Compare) or not _reads_kind(node.left):
                continue
            for right in node.comparators:
                items = right.elts if isinstance(right, ast.Tuple | ast.Set | ast.List) else [right]
                for item in items:
                    if isinstance(item, ast.Constant) and isinstance(item.value, str):
                        spelled[item.value] = f"{module}:{node.lineno}"
    assert spelled, "the scan found no comparison at all"
    unknown = {k: where for k, where in spelled.items() if k not in KINDS}
    assert set(unknown) <= _NOT_SUGGESTIONS, unknown


def _reads_kind(node: ast.expr) -> bool:
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value == "kind"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        first = node.args[0] if node.args else None
        return node.func.attr == "get" and isinstance(first, ast.Constant) and first.value == "kind"
    return False


def test_every_entry_is_consistent() -> None:
    assert {name: k.problem() for name, k in KINDS.items() if k.problem()} == {}
    assert all(name == k.name for name, k in KINDS.items())


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        (Kind("x", "x", auto=True), "no action family"),
        (Kind("x", "x", family="sandbox", auto=True, proposed=False), "no detector"),
        (Kind("x", "x", family="backup", auto=True, protects=True), "never auto"),
        (Kind("x", "x", family="memory", explained=True), "sandbox family"),
        (Kind("x", "x", record=True), "no action family"),
        (Kind("x", "x", trends=True, proposed=False), "no detector"),
        (Kind("x", " "), "no label"),
        (Kind("Bad-Name", "x"), "lower_case"),
        (Kind("x", "x", worth=-1), "negative"),
    ],
)
def test_an_inconsistent_entry_is_named(entry: Kind, says: str) -> None:
    problem = entry.problem()
    assert problem is not None and says in problem


def test_an_entry_is_set_once() -> None:
    with pytest.raises(AttributeError):
        KINDS["organize"].worth = 9


def test_the_policy_names_exactly_the_kinds_that_may_run_on_their_own() -> None:
    assert set(AUTO_KINDS) == {n for n, k in KINDS.items() if k.auto}
    assert all(KINDS[n].family is not None for n in AUTO_KINDS)
    policy_from_dict({"auto": {"kinds": list(AUTO_KINDS)}})
    with pytest.raises(ConfigError, match="only tells you something"):
        policy_from_dict({"auto": {"kinds": ["low_mood"]}})
    with pytest.raises(ConfigError, match="unknown kind"):
        policy_from_dict({"auto": {"kinds": ["borrar_todo"]}})


def test_the_budget_and_the_journal_read_the_registry() -> None:
    assert protects("backup") and not protects("organize")
    assert worth("backup", 0, 0.5) > worth("repeated_failure", 0, 0.5)
    assert worth("a_kind_of_long_ago", 3, 0.5) == (kinds.FILES_WORTH, 0.5, 3)
    assert {"backup", "backup_forget"} == RECORD_KINDS


def test_a_person_reads_a_kind_in_words_and_the_wire_keeps_its_name() -> None:
    rows = [{"id": 1, "status": "pending", "kind": "organize", "files": 3, "title": "t"}]
    with language("es"):
        shown = render_result("suggestions.list", {}, rows)
        autonomy = {"configured": "auto", "effective": "auto", "paused": False}
        status = render_result(
            "status", {}, {"autonomy": {**autonomy, "auto_kinds": ["temp_cleanup", "organize"]}}
        )
    assert "ordenar carpetas" in shown and "organize" not in shown
    assert "limpieza de temporales (temp_cleanup)" in status
    assert rows[0]["kind"] == "organize"
    assert kinds.label("a_kind_of_long_ago") == "a_kind_of_long_ago"


def test_the_type_checkers_kind_names_are_the_registry() -> None:
    """A typed record's kind (policies.results) is a ``KindName``: the registry's names."""
    source = Path(kinds.__file__).read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "KindName" for t in node.targets
        ):
            assert isinstance(node.value, ast.Subscript)
            assert isinstance(node.value.slice, ast.Tuple)
            names = tuple(ast.literal_eval(e) for e in node.value.slice.elts)
            assert names == tuple(KINDS)
            return
    raise AssertionError("policies.kinds defines no KindName")
