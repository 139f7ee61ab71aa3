"""Every op is defined once, whole: its class (actions.ops) has every concern, an op of the
sandbox family has its handler (sandbox.ops) with every step, and every action family has a
member in the one registry (agent.loop.families)."""

from __future__ import annotations

import inspect
import typing

import pytest

from actions.ops import OP_NAMES, OPS, MemoryMerge, Mkdir, Op, OpName, op_from_dict, plan_family
from agent.loop.families import Absent, Families
from policies.errors import BadArgumentError, UnavailableError
from policies.kinds import BACKUP, FAMILIES, MEMORY, SANDBOX
from sandbox import table
from sandbox.ops import HANDLERS, Handler


def test_the_op_names_the_table_and_the_literal_agree() -> None:
    assert set(typing.get_args(OpName)) == set(OP_NAMES) == set(OPS)
    for name, cls in OPS.items():
        assert cls.__dataclass_fields__["op"].default == name


@pytest.mark.parametrize("name", OP_NAMES)
def test_an_op_has_every_concern(name: str) -> None:
    cls = OPS[name]
    missing = sorted(getattr(cls, "__abstractmethods__", ()))
    assert not missing, f"op {name} lacks {missing} (actions.ops.Op says what each is)"
    assert cls.family in FAMILIES
    op = table.sample(cls)
    assert op_from_dict(op.to_dict()) == op  # the codec reads back what it writes
    assert op.describe().startswith("- ")


def test_every_op_of_the_sandbox_family_has_its_handler() -> None:
    in_sandbox = {name for name, cls in OPS.items() if cls.family == SANDBOX}
    assert set(HANDLERS) == in_sandbox, "an op of the sandbox family with no handler, or a stray"
    for name, handler in HANDLERS.items():
        assert isinstance(handler, Handler)
        assert not inspect.isabstract(type(handler)), f"the handler of {name} lacks a step"


def test_a_plan_runs_in_its_ops_family() -> None:
    assert plan_family([]) == SANDBOX  # a notice: nothing to run
    assert plan_family([Mkdir("user/a")]) == SANDBOX
    assert plan_family([MemoryMerge("a", ("b",))]) == MEMORY
    with pytest.raises(BadArgumentError):
        plan_family([Mkdir("user/a"), MemoryMerge("a", ("b",))])


def test_every_action_family_has_its_member() -> None:
    absent = {name: Absent(name) for name in FAMILIES}
    Families(absent)
    for name in FAMILIES:
        with pytest.raises(ValueError, match=name):
            Families({k: v for k, v in absent.items() if k != name})
    with pytest.raises(UnavailableError):
        Families(absent).members[BACKUP].undo(1)


def test_the_table_prints_every_kind_and_every_op(capsys: pytest.CaptureFixture[str]) -> None:
    table.main()
    out = capsys.readouterr().out
    lines = out.splitlines()
    for name in OPS:
        assert any(line.startswith(f"{name} ") for line in lines), name
    assert any(line.startswith("organize ") for line in lines)
    assert "move          sandbox  SRC, DST  yes   move" in out


def test_an_op_that_lacks_a_concern_cannot_be_built() -> None:
    class Half(Op):  # no write_paths, touches_file, inverse, describe
        pass

    assert inspect.isabstract(Half)
    with pytest.raises(TypeError):
        Half("mkdir")  # type: ignore[abstract]  # what mypy refuses, shown at run time too
