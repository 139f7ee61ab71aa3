"""policies.states: the words of a suggestion's life and of autonomy, written once."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path
from typing import get_args

from control.commands import COMMANDS
from policies import states
from policies.config import Policy
from state import journal, suggestions


def test_the_leaf_imports_only_the_standard_library_light_parts() -> None:
    # typing is light and alma-ctl's argparse line loads it anyway; these are not.
    code = (
        "import sys; import policies.states; "
        "print(sorted(m for m in ('pydantic', 'dataclasses') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_levels_are_ordered_and_the_policy_accepts_exactly_them() -> None:
    assert [states.level_rank(level) for level in states.LEVELS] == [0, 1, 2, 3]
    assert get_args(Policy.model_fields["level"].annotation) == states.LEVELS


def test_the_store_and_the_commands_know_the_same_statuses() -> None:
    # The table's CHECK is a migration already run on every root: it must agree, not move.
    check = re.search(r"status IN\s*\(([^)]*)\)", suggestions.MIGRATIONS[0])
    assert check is not None
    assert tuple(w.strip(" '\n") for w in check[1].split(",")) == states.SUGGESTION_STATUSES
    listed = {a.name: a for a in COMMANDS["suggestions.list"].args}
    # The list also filters by what the store derives: an executed suggestion undone since.
    assert listed["status"].choices == (*states.SUGGESTION_STATUSES, states.UNDONE)
    lowered = {a.name: a for a in COMMANDS["autonomy.level"].args}
    assert lowered["level"].choices == states.LEVELS


def test_the_store_knows_the_same_outcomes_and_counts_some() -> None:
    check = re.search(r"event IN\s*\(([^)]*)\)", "".join(suggestions.MIGRATIONS))
    assert check is not None
    assert tuple(w.strip(" '\n") for w in check[1].split(",")) == states.OUTCOMES
    assert set(states.COUNTED_OUTCOMES) < set(states.OUTCOMES)


def _literal(module: object, name: str) -> tuple[str, ...]:
    """The words of ``name = Literal[...]``, which the module defines for the type checker only
    (its ``TYPE_CHECKING`` block does not run)."""
    source = Path(str(getattr(module, "__file__", ""))).read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            assert isinstance(node.value, ast.Subscript)
            words = node.value.slice
            elements = words.elts if isinstance(words, ast.Tuple) else [words]
            return tuple(str(ast.literal_eval(e)) for e in elements)
    raise AssertionError(f"{name} is not defined in {module}")


def test_the_type_checkers_statuses_are_the_tuples() -> None:
    assert _literal(states, "SuggestionStatus") == states.SUGGESTION_STATUSES
    assert _literal(states, "ActionStatus") == states.ACTION_STATUSES
    assert _literal(states, "Outcome") == states.OUTCOMES
    assert _literal(states, "Level") == states.LEVELS
    # The journal's CHECK is a migration already run on every root: it must agree, not move.
    check = re.search(r"status IN\s*\(([^)]*)\)", journal.MIGRATIONS[0])
    assert check is not None
    assert tuple(w.strip(" '\n") for w in check[1].split(",")) == states.ACTION_STATUSES


def test_the_typed_counts_are_the_counted_outcomes() -> None:
    from policies.results import KindCounts

    assert tuple(KindCounts.__annotations__)[1:] == states.COUNTED_OUTCOMES
