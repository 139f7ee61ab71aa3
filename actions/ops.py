"""The op vocabulary. A plan is a list of ops: data, shown op by op before anything runs.

Ops are frozen dataclasses with a strict parser (:func:`op_from_dict`): stored plans are read
back at the edge of the executor and must be exactly what a planner wrote. Plain dataclasses
rather than pydantic keep the confined executor's start-up short (it runs once per action).
Paths are relative to the ALMA root and ``/``-separated (contract §3).

Each op's class says, once, everything an op is besides its work on the files (sandbox.ops):
its family, what it touches, its inverse and its description (:class:`Op`).

One module, longer than most, because it is the vocabulary and its one codec together: each
op's shape, its strict parsing and a plan's stored text cannot drift apart.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Set
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NamedTuple, TypedDict, cast

from policies.errors import BadArgumentError, InvalidStateError
from policies.i18n import _
from policies.kinds import MEMORY, SANDBOX
from policies.limits import EDIT_BYTES

if TYPE_CHECKING:
    from policies.kinds import Family

OpName = Literal[
    "mkdir",
    "move",
    "trash",
    "restore",
    "rmdir",
    "keep",
    "edit",
    "create",
    "memory_merge",
    "memory_edit",
]
OP_NAMES: tuple[OpName, ...] = (
    "mkdir",
    "move",
    "trash",
    "restore",
    "rmdir",
    "keep",
    "edit",
    "create",
    "memory_merge",
    "memory_edit",
)
FileKind = Literal["file", "dir", "symlink", "other"]


class IdentityDict(TypedDict):
    """An identity as JSON holds it (a plan's ``expect``, the journal's pre and post)."""

    dev: int
    ino: int
    kind: FileKind
    size: int
    mtime_ns: int
    sha256: str | None
    boot: str | None
    ctime_ns: int | None


class Identity(NamedTuple):
    """What a file was when the plan was made: a later change means the plan no longer applies.

    ``dev`` is compared only within one boot (``boot``), because a portable disk can come back
    with another device number; inode, size, mtime and type must always match.

    An immutable named tuple rather than a frozen dataclass: an action builds several per file
    (planned, validated, arrived, parsed back), and a frozen dataclass takes several times as
    long to build. ``ident._replace(sha256=...)`` makes a changed copy.
    """

    dev: int
    ino: int
    kind: FileKind
    size: int
    mtime_ns: int
    sha256: str | None = None
    boot: str | None = None
    #: Set by the kernel on every change (content, metadata, rename) and never settable by a
    #: program: it tells a file from one deleted and recreated with the same bytes and mtime,
    #: which may even reuse the inode number.
    ctime_ns: int | None = None

    def to_dict(self) -> IdentityDict:
        # Every field, in order: what identity_from_dict reads back.
        return cast("IdentityDict", self._asdict())

    def same_file(self, other: Identity, *, check_ctime: bool = True) -> bool:
        """``check_ctime=False`` when a rename of ours may lie in between (it moves ctime)."""
        if (self.ino, self.kind, self.size, self.mtime_ns) != (
            other.ino,
            other.kind,
            other.size,
            other.mtime_ns,
        ):
            return False
        if (
            check_ctime
            and self.ctime_ns is not None
            and other.ctime_ns is not None
            and self.ctime_ns != other.ctime_ns
        ):
            return False
        if self.boot is not None and self.boot == other.boot:
            return self.dev == other.dev
        return True


#: The compact JSON that stored plans and journal rows are written in (one encoder: ``json.dumps``
#: with options builds a new one per call).
dumps_compact = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
#: A JSON string of a str, as ``dumps_compact`` writes it inside a document (the C function).
_json_str = json.encoder.encode_basestring


def _json_value(value: object) -> str:
    """``dumps_compact(value)``, quicker for the str, int and None of an op's fields."""
    if type(value) is str:
        return _json_str(value)
    if type(value) is int:
        return int.__repr__(value)
    return "null" if value is None else dumps_compact(value)


#: Field names of each op class, in order (``dataclasses.fields`` is slow per call).
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


@dataclass(frozen=True)
class Op(ABC):
    """One op. Everything an op is, besides how the sandbox applies it (sandbox.ops, one
    handler an op of the ``sandbox`` family), is said here, once, by its class: its family,
    what it touches, its inverse and its description. Each is abstract, so an op that lacks
    one cannot be built (and mypy says so); ``python -m sandbox.table`` prints them all."""

    op: OpName
    #: The action family that runs it (policies.kinds): the confined child, or the daemon.
    family: ClassVar[Family]

    @abstractmethod
    def write_paths(self) -> tuple[str, ...]:
        """Every root-relative path this op changes (checked against the zones)."""

    @abstractmethod
    def touches_file(self) -> bool:
        """Whether it counts as a file the plan touches (the policy's thresholds)."""

    @abstractmethod
    def inverse(self, post: Mapping[str, Any] | None, aux: Mapping[str, Any]) -> tuple[Op, ...]:
        """The ops that take it back, in order, from what the journal recorded it left
        (``post``: the identity of the file it left; ``aux``: where a file went aside)."""

    @abstractmethod
    def describe(self) -> str:
        """The line a person reads for it once done (logs/alma/acciones.md)."""

    def arrival(self) -> str | None:
        """Where a file arrives that was elsewhere (the executor counts a folder's arrivals)."""
        return None

    def gate_names(self) -> tuple[str, ...]:
        """The names the policy gate checks besides :meth:`write_paths` (one it reads)."""
        return ()

    def relax_ctime(self, touched_later: Set[str]) -> Op:
        """This op with its ``expect`` no longer holding the ctime, when the file it checks was
        renamed by a later action of ALMA's (our own rename moved it); itself otherwise."""
        return self

    def to_dict(self) -> dict[str, Any]:
        # By hand rather than dataclasses.asdict, which deep-copies: this runs for every op.
        names = _FIELD_NAMES.get(type(self))
        if names is None:
            names = _FIELD_NAMES[type(self)] = tuple(f.name for f in fields(self))
        data: dict[str, Any] = {}
        for name in names:
            value = getattr(self, name)
            if isinstance(value, Identity):
                data[name] = value.to_dict()
            elif value is not None:
                data[name] = value
        return data

    def to_json(self) -> str:
        """The op as a stored plan holds it: :meth:`to_dict` in :data:`dumps_compact`."""
        return dumps_compact(self.to_dict())


def _expected(post: Mapping[str, Any] | None, op: Op) -> Identity:
    """The identity an inverse expects: the one the journal recorded the op left."""
    if post is None:
        raise InvalidStateError(
            _("the journal has no record of where {op} left its file.", op=op.op)
        )
    return identity_from_dict(post)


def _loose(expect: Identity | None, path: str, touched_later: Set[str]) -> Identity | None:
    """``expect`` without its ctime when ``path`` was renamed later (see Op.relax_ctime);
    None when it stays as it is."""
    if expect is None or path not in touched_later:
        return None
    return expect._replace(ctime_ns=None)


@dataclass(frozen=True)
class Mkdir(Op):
    path: str
    op: OpName = field(default="mkdir", init=False)
    family: ClassVar[Family] = SANDBOX

    def write_paths(self) -> tuple[str, ...]:
        return (self.path,)

    def touches_file(self) -> bool:
        return False

    def inverse(self, post: Mapping[str, Any] | None, aux: Mapping[str, Any]) -> tuple[Op, ...]:
        return (Rmdir(self.path),)

    def describe(self) -> str:
        return _("- folder created: {path}", path=self.path)


@dataclass(frozen=True)
class Rmdir(Op):
    """Remove a directory this engine created, only while it is empty."""

    path: str
    op: OpName = field(default="rmdir", init=False)
    family: ClassVar[Family] = SANDBOX

    def write_paths(self) -> tuple[str, ...]:
        return (self.path,)

    def touches_file(self) -> bool:
        return False

    def inverse(self, post: Mapping[str, Any] | None, aux: Mapping[str, Any]) -> tuple[Op, ...]:
        return (Mkdir(self.path),)

    def describe(self) -> str:
        return _("- folder removed: {path}", path=self.path)


@dataclass(frozen=True)
class Move(Op):
    src: str
    dst: str
    expect: Identity | None = None
    op: OpName = field(default="move", init=False)
    family: ClassVar[Family] = SANDBOX

    def write_paths(self) -> tuple[str, ...]:
        return (self.src, self.dst)

    def touches_file(self) -> bool:
        return True

    def inverse(self, post: Mapping[str, Any] | None, aux: Mapping[str, Any]) -> tuple[Op, ...]:
        return (Move(src=self.dst, dst=self.src, expect=_expected(post, self)),)

    def describe(self) -> str:
        return _("- moved {src} → {dst}", src=self.src, dst=self.dst)

    def arrival(self) -> str | None:
        return self.dst

    def relax_ctime(self, touched_later: Set[str]) -> Op:
        loose = _loose(self.expect, self.src, touched_later)
        return self if loose is None else replace(self, expect=loose)

    def to_dict(self) -> dict[str, Any]:
        # Op.to_dict's result, built directly: an organize or its undo has 100,000 of them.
        if self.expect is None:
            return {"op": "move", "src": self.src, "dst": self.dst}
        return {"op": "move", "src": self.src, "dst": self.dst, "expect": self.expect._asdict()}

    def to_json(self) -> str:
        # The same text as Op.to_json, written directly: no dict and no encoder per op, a
        # quarter of the time, for the 100,000 moves of an organize or its undo (a test
        # compares the two on generated ops).
        e, j = self.expect, _json_value
        if e is None:
            return super().to_json()
        return (
            f'{{"op":"move","src":{j(self.src)},"dst":{j(self.dst)},"expect":{{"dev":{j(e.dev)},'
            f'"ino":{j(e.ino)},"kind":{j(e.kind)},"size":{j(e.size)},"mtime_ns":{j(e.mtime_ns)},'
            f'"sha256":{j(e.sha256)},"boot":{j(e.boot)},"ctime_ns":{j(e.ctime_ns)}}}}}'
        )


@dataclass(frozen=True)
class Trash(Op):
    """Move to ALMA's trash (``.alma/trash``), keeping the original path: delete is never final."""

    path: str
    expect: Identity | None = None
    op: OpName = field(default="trash", init=False)
    family: ClassVar[Family] = SANDBOX

    def write_paths(self) -> tuple[str, ...]:
        return (self.path,)

    def touches_file(self) -> bool:
        return True

    def inverse(self, post: Mapping[str, Any] | None, aux: Mapping[str, Any]) -> tuple[Op, ...]:
        expect = _expected(post, self)
        return (Restore(trash=str(aux["dst"]), path=self.path, expect=expect),)

    def describe(self) -> str:
        return _("- to the trash: {path}", path=self.path)

    def relax_ctime(self, touched_later: Set[str]) -> Op:
        loose = _loose(self.expect, self.path, touched_later)
        return self if loose is None else replace(self, expect=loose)


@dataclass(frozen=True)
class Restore(Op):
    """Move an entry of ALMA's trash (``trash``, root-relative) back to ``path``."""

    trash: str
    path: str
    expect: Identity | None = None
    op: OpName = field(default="restore", init=False)
    family: ClassVar[Family] = SANDBOX

    def write_paths(self) -> tuple[str, ...]:
        return (self.path,)

    def touches_file(self) -> bool:
        return True

    def inverse(self, post: Mapping[str, Any] | None, aux: Mapping[str, Any]) -> tuple[Op, ...]:
        return (Trash(path=self.path, expect=_expected(post, self)),)

    def describe(self) -> str:
        return _("- back from the trash: {path}", path=self.path)

    def arrival(self) -> str | None:
        return self.path

    def gate_names(self) -> tuple[str, ...]:
        return (self.trash,)

    def relax_ctime(self, touched_later: Set[str]) -> Op:
        loose = _loose(self.expect, self.trash, touched_later)
        return self if loose is None else replace(self, expect=loose)


@dataclass(frozen=True)
class Keep(Op):
    """Change nothing: the plan holds only while this file is as it was when planned (the copy a
    dedupe keeps: its duplicates are trashed only if it is still there, with the same bytes)."""

    path: str
    expect: Identity | None = None
    op: OpName = field(default="keep", init=False)
    family: ClassVar[Family] = SANDBOX

    def write_paths(self) -> tuple[str, ...]:
        return ()

    def touches_file(self) -> bool:
        return False

    def inverse(self, post: Mapping[str, Any] | None, aux: Mapping[str, Any]) -> tuple[Op, ...]:
        # It held for trashing its duplicates, and they are bytes of their own: whatever became
        # of the kept copy since, they come back (only a file in their place stops them).
        return ()

    def describe(self) -> str:
        return _("- kept: {path}", path=self.path)

    def relax_ctime(self, touched_later: Set[str]) -> Op:
        loose = _loose(self.expect, self.path, touched_later)
        return self if loose is None else replace(self, expect=loose)


class _NewContent:
    """What an edit and a create share: one file, and the bytes ALMA writes there."""

    path: str
    content: bytes

    def write_paths(self) -> tuple[str, ...]:
        return (self.path,)

    def touches_file(self) -> bool:
        return True

    @property
    def sha256(self) -> str:
        """The new content's hash: how recovery tells the version ALMA wrote from any other."""
        return hashlib.sha256(self.content).hexdigest()

    def content_b64(self) -> str:
        return base64.b64encode(self.content).decode("ascii")


@dataclass(frozen=True)
class Edit(_NewContent, Op):
    """Replace the regular file ``path`` with ``content``: the old version goes to ALMA's trash
    (its undo brings it back byte for byte), the new one is published without replacing
    anything that appeared meanwhile. ``expect`` must carry the old file's sha256: the new
    content was computed from those bytes. The content travels in the plan (base64 in JSON),
    so the journal, recovery and ``suggestions show`` all read it from one place."""

    path: str
    expect: Identity
    content: bytes
    op: OpName = field(default="edit", init=False)
    family: ClassVar[Family] = SANDBOX

    def inverse(self, post: Mapping[str, Any] | None, aux: Mapping[str, Any]) -> tuple[Op, ...]:
        """The version ALMA wrote goes to the trash (refused if the person changed it since:
        ``post``, ctime included) before the old version comes back from the trash, byte for
        byte and with its mode (the same inode; its hash is checked, its ctime moved with our
        own rename). Refused, nothing moves: both versions stay where they are."""
        if post is None or not isinstance(aux.get("trash"), str):
            raise InvalidStateError(
                _("the journal has no record of how {path!r} was edited.", path=self.path)
            )
        return (
            Trash(path=self.path, expect=identity_from_dict(post)),
            Restore(
                trash=str(aux["trash"]), path=self.path, expect=self.expect._replace(ctime_ns=None)
            ),
        )

    def describe(self) -> str:
        return _("- edited: {path} (its old version to ALMA's trash)", path=self.path)

    def to_dict(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "path": self.path,
            "expect": self.expect.to_dict(),
            "content_b64": self.content_b64(),
        }


@dataclass(frozen=True)
class Create(_NewContent, Op):
    """Write a new regular file ``path`` holding ``content``, never over anything: the file is
    written beside and published with a no-replace rename, so a file already there (or one that
    appears meanwhile) refuses the op. Its folder must exist, or be made by a ``mkdir`` before
    it in the plan. Its undo trashes the file only while it is still the one ALMA wrote. The
    content travels in the plan (base64 in JSON), like an edit's."""

    path: str
    content: bytes
    op: OpName = field(default="create", init=False)
    family: ClassVar[Family] = SANDBOX

    def inverse(self, post: Mapping[str, Any] | None, aux: Mapping[str, Any]) -> tuple[Op, ...]:
        # The file ALMA wrote goes to the trash only while it is that file (``post``, its
        # sha256 and ctime included): changed by the person since, the undo is refused.
        if post is None:
            raise InvalidStateError(
                _("the journal has no record of the file {path!r} ALMA created.", path=self.path)
            )
        return (Trash(path=self.path, expect=identity_from_dict(post)),)

    def describe(self) -> str:
        return _("- file created: {path}", path=self.path)

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.op, "path": self.path, "content_b64": self.content_b64()}


class _MemoryOp(Op):
    """An op of the memory family: not a file op. The family runs it in the daemon, on its own
    memory store, journaled with the memory's state before it, and undoes it by writing that
    state back (agent.memory.merge_actions): no op of a plan takes it back, and the sandboxed
    file executor refuses it."""

    family: ClassVar[Family] = MEMORY

    def write_paths(self) -> tuple[str, ...]:
        return ()

    def touches_file(self) -> bool:
        return False

    def inverse(self, post: Mapping[str, Any] | None, aux: Mapping[str, Any]) -> tuple[Op, ...]:
        raise InvalidStateError(_("op {op} cannot be undone.", op=self.op))


@dataclass(frozen=True)
class MemoryMerge(_MemoryOp):
    """Merge near-identical memories into ``keep`` (the others are archived, never deleted)."""

    keep: str
    merge: tuple[str, ...]
    op: OpName = field(default="memory_merge", init=False)

    def describe(self) -> str:
        return _(
            "- memories merged into {keep}: {merged}",
            keep=self.keep,
            merged=", ".join(self.merge),
        )

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.op, "keep": self.keep, "merge": list(self.merge)}


@dataclass(frozen=True)
class MemoryEdit(_MemoryOp):
    """A person's edit of one memory (``memory.edit``): which of its fields changed; the
    journal's row keeps both states (agent.memory.merge_actions.edit)."""

    id: str
    fields: tuple[str, ...]
    op: OpName = field(default="memory_edit", init=False)

    def describe(self) -> str:
        return _("- memory {id} edited: {fields}", id=self.id, fields=", ".join(self.fields))

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.op, "id": self.id, "fields": list(self.fields)}


_FIELDS: dict[str, tuple[type[Op], frozenset[str], frozenset[str]]] = {
    # op name -> (class, required keys, optional keys)
    "mkdir": (Mkdir, frozenset({"path"}), frozenset()),
    "rmdir": (Rmdir, frozenset({"path"}), frozenset()),
    "move": (Move, frozenset({"src", "dst"}), frozenset({"expect"})),
    "trash": (Trash, frozenset({"path"}), frozenset({"expect"})),
    "restore": (Restore, frozenset({"trash", "path"}), frozenset({"expect"})),
    "keep": (Keep, frozenset({"path", "expect"}), frozenset()),
    "edit": (Edit, frozenset({"path", "expect", "content_b64"}), frozenset()),
    "create": (Create, frozenset({"path", "content_b64"}), frozenset()),
    "memory_merge": (MemoryMerge, frozenset({"keep", "merge"}), frozenset()),
    "memory_edit": (MemoryEdit, frozenset({"id", "fields"}), frozenset()),
}
#: Every op's class, by its name: the op table (``python -m sandbox.table`` prints it).
OPS: Mapping[str, type[Op]] = {name: entry[0] for name, entry in _FIELDS.items()}
#: The ops on a folder, not a file: a plan's summary counts them apart from the files.
FOLDER_OPS: frozenset[str] = frozenset({Mkdir.op, Rmdir.op})
#: The ops that write a file's content: a person reads their diff before accepting.
CONTENT_OPS: frozenset[str] = frozenset({Edit.op, Create.op})


def plan_family(plan: Iterable[Op]) -> Family:
    """The action family that runs ``plan``: its ops' (an empty plan, a notice's, runs in the
    sandbox and changes nothing). A plan that mixes families is refused: no family runs the
    other's ops."""
    families = {op.family for op in plan}
    if len(families) > 1:
        raise BadArgumentError(
            _("a plan mixes ops that run in different places; make the plan again.")
        )
    return families.pop() if families else SANDBOX


_IDENTITY_INT = ("dev", "ino", "size", "mtime_ns")
_MOVE_KEYS = frozenset({"op", "src", "dst", "expect"})


_IDENTITY_KEYS = frozenset({*_IDENTITY_INT, "kind", "sha256", "boot", "ctime_ns"})
_KINDS = frozenset({"file", "dir", "symlink", "other"})


def identity_from_dict(data: Any) -> Identity:
    """Parse an identity strictly (the shape :meth:`Identity.to_dict` writes)."""
    # The shape every stored identity has, checked in one expression: a plan of 10,000 moves
    # parses 10,000 of them. Anything else takes the checks below, which say what is wrong.
    if type(data) is dict and data.keys() == _IDENTITY_KEYS:
        dev, ino, size, mtime = data["dev"], data["ino"], data["size"], data["mtime_ns"]
        kind, sha, boot, ctime = data["kind"], data["sha256"], data["boot"], data["ctime_ns"]
        if (
            type(dev) is int
            and type(ino) is int
            and type(size) is int
            and type(mtime) is int
            and min(dev, ino, size, mtime) >= 0
            and type(kind) is str
            and kind in _KINDS
            and (sha is None or type(sha) is str)
            and (boot is None or type(boot) is str)
            and (ctime is None or (type(ctime) is int and ctime >= 0))
        ):
            return Identity(dev, ino, cast("FileKind", kind), size, mtime, sha, boot, ctime)
    return _identity_checked(data)


def _identity_checked(data: Any) -> Identity:
    if not isinstance(data, Mapping):
        raise BadArgumentError(_("an op's 'expect' must be an object; the stored plan is damaged."))
    allowed = {*_IDENTITY_INT, "kind", "sha256", "boot", "ctime_ns"}
    extra = set(data) - allowed
    if extra or any(k not in data for k in (*_IDENTITY_INT, "kind")):
        raise BadArgumentError(
            _(
                "an op's 'expect' has wrong keys ({value}); the plan is damaged.",
                value=sorted(extra) or "missing",
            )
        )
    for key in _IDENTITY_INT:
        value = data[key]
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise BadArgumentError(_("expect.{key} must be a non-negative integer.", key=key))
    if data["kind"] not in ("file", "dir", "symlink", "other"):
        raise BadArgumentError(_("expect.kind must be file, dir, symlink or other."))
    for key in ("sha256", "boot"):
        if data.get(key) is not None and not isinstance(data[key], str):
            raise BadArgumentError(_("expect.{key} must be text.", key=key))
    ctime = data.get("ctime_ns")
    if ctime is not None and (not isinstance(ctime, int) or isinstance(ctime, bool) or ctime < 0):
        raise BadArgumentError(_("expect.ctime_ns must be a non-negative integer."))
    return Identity(
        dev=data["dev"],
        ino=data["ino"],
        kind=data["kind"],
        size=data["size"],
        mtime_ns=data["mtime_ns"],
        sha256=data.get("sha256"),
        boot=data.get("boot"),
        ctime_ns=ctime,
    )


def op_from_dict(data: Any) -> Op:
    """Parse one op strictly: unknown ops, unknown keys and wrong types are refused."""
    if not isinstance(data, Mapping):
        raise BadArgumentError(_("each op of a plan must be an object."))
    name = data.get("op")
    if name not in _FIELDS:
        raise BadArgumentError(
            _(
                "unknown op {name!r}; known ops are {OP_NAMES}.",
                name=name,
                OP_NAMES=", ".join(OP_NAMES),
            )
        )
    cls, required, optional = _FIELDS[name]
    if name == "move" and type(data) is dict and data.keys() == _MOVE_KEYS:
        src, dst, expect = data["src"], data["dst"], data["expect"]
        if type(src) is str and type(dst) is str:  # the op of an organize, thousands a plan
            return Move(src, dst, None if expect is None else identity_from_dict(expect))
    keys = set(data) - {"op"}
    if not required <= keys or keys - required - optional:
        raise BadArgumentError(
            _(
                "op {name} takes {value}; got {keys}.",
                name=name,
                value=", ".join(sorted(required | optional)),
                keys=", ".join(sorted(keys)),
            )
        )
    kwargs: dict[str, Any] = {}
    for key in required | (optional & keys):
        value = data[key]
        if key == "expect":
            kwargs[key] = None if value is None else identity_from_dict(value)
        elif key == "merge":
            if (
                not isinstance(value, list)
                or not value
                or not all(isinstance(v, str) for v in value)
            ):
                raise BadArgumentError(
                    _("op {name}: merge must be a non-empty list of memory ids.", name=name)
                )
            kwargs[key] = tuple(value)
        elif key == "fields":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise BadArgumentError(
                    _("op {name}: fields must be a list of a memory's field names.", name=name)
                )
            kwargs[key] = tuple(value)
        elif key == "content_b64":
            kwargs["content"] = _content(value, name)
        elif not isinstance(value, str):
            raise BadArgumentError(_("op {name}: {key} must be a path (text).", name=name, key=key))
        else:
            kwargs[key] = value
    if isinstance(kwargs.get("expect"), Identity) and name == "edit":
        planned: Identity = kwargs["expect"]
        if planned.kind != "file" or planned.sha256 is None:
            raise BadArgumentError(
                _(
                    "op edit: expect must be a regular file's identity with its sha256; the "
                    "plan is damaged or was made by hand, make it again."
                )
            )
    elif name == "edit":
        raise BadArgumentError(_("op edit: expect is required; make the plan again."))
    return cls(**kwargs)


def _content(value: Any, name: str) -> bytes:
    """An edit's or a create's new content: strict base64 of at most EDIT_BYTES bytes."""
    if not isinstance(value, str) or len(value) > 4 * (EDIT_BYTES // 3 + 1):
        raise BadArgumentError(
            _(
                "op {name}: content_b64 must be base64 text of at most {n} bytes.",
                name=name,
                n=EDIT_BYTES,
            )
        )
    try:
        data = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise BadArgumentError(
            _("op {name}: content_b64 is not valid base64; the plan is damaged.", name=name)
        ) from None
    if len(data) > EDIT_BYTES:
        raise BadArgumentError(
            _(
                "op {name}: the new content is {size} bytes, more than {n}.",
                name=name,
                size=len(data),
                n=EDIT_BYTES,
            )
        )
    return data


@dataclass(frozen=True)
class StoredPlan:
    """A plan read back from its store: the ops, parsed strictly (what the policy gate
    judges), and the text they were read from, which the next store copies as it is rather
    than encoding the ops again (a suggestion's plan becomes its action's)."""

    ops: list[Op]
    text: str


def encode_plan(plan: Iterable[Op | Mapping[str, Any]]) -> tuple[str, int]:
    """A plan as it is stored (a suggestion's, an action's): a JSON array, one op a line; and
    how many ops it has. ``plan`` may be a generator: each op is encoded as it comes, so a
    plan of 100,000 ops is never a list of dicts here."""
    lines = [op.to_json() if isinstance(op, Op) else dumps_compact(op) for op in plan]
    return "[\n" + ",\n".join(lines) + "\n]", len(lines)


def read_plan(text: str) -> StoredPlan:
    """A stored plan, parsed strictly, with its text kept (:class:`StoredPlan`)."""
    return StoredPlan(plan_from_json(text), text)


def plan_from_list(data: Any) -> list[Op]:
    if not isinstance(data, list):
        raise BadArgumentError(_("a plan must be a list of ops."))
    return [op_from_dict(item) for item in data]


def plan_from_json(text: str) -> list[Op]:
    """Parse a stored plan (a JSON array of ops) op by op: the ops are built while each op's
    dict is decoded, never the whole list of dicts first (for a large plan that list would
    weigh more than the text and the ops together)."""
    try:
        return [op_from_dict(item) for item in iter_json_array(text)]
    except ValueError as exc:
        raise _damaged() from exc


def iter_plan_items(text: str) -> Iterator[Any]:
    """A stored plan's items as stored, unparsed as ops (to show it), one at a time as they
    are asked for (a summary of 100,000 ops holds counters, not the ops): the same reading, and
    the same error where the damage is, as :func:`plan_from_json`."""
    try:
        yield from iter_json_array(text)
    except ValueError as exc:
        raise _damaged() from exc


def _damaged() -> BadArgumentError:
    # json's detail (a character offset) helps whoever repairs the store, not the person: it
    # stays the error's __cause__, for the log (this module does not import logging: the
    # confined executor imports it and starts light).
    return BadArgumentError(_("the stored plan is not valid JSON; it is damaged."))


_WHITESPACE = re.compile(r"[ \t\n\r]*")


def _skip_ws(text: str, i: int) -> int:
    return _WHITESPACE.match(text, i).end()  # type: ignore[union-attr]  # '*' always matches


_DECODER = json.JSONDecoder()


def iter_json_array(text: str) -> Iterator[Any]:
    """The items of the JSON array ``text``, decoded one at a time. ValueError (as ``json``
    raises) when ``text`` is not exactly one array."""
    for _start, item in iter_json_array_at(text):
        yield item


def iter_json_array_at(text: str) -> Iterator[tuple[int, Any]]:
    """:func:`iter_json_array`, each item with the offset where it starts in ``text`` (so a
    reader can come back to it: ``decode_json_at``)."""
    end = len(text)
    i = _skip_ws(text, 0)
    if i >= end or text[i] != "[":
        raise ValueError("expected a JSON array")
    i = _skip_ws(text, i + 1)
    if i < end and text[i] == "]":
        i += 1
    else:
        while True:
            start = i
            item, i = _DECODER.raw_decode(text, i)
            yield start, item
            i = _skip_ws(text, i)
            if i < end and text[i] == ",":
                i = _skip_ws(text, i + 1)
                continue
            if i < end and text[i] == "]":
                i += 1
                break
            raise ValueError(f"expected ',' or ']' at character {i}")
    if _skip_ws(text, i) != end:
        raise ValueError(f"extra data after the array at character {i}")


def decode_json_at(text: str, start: int) -> Any:
    """The JSON value that starts at offset ``start`` of ``text`` (from iter_json_array_at)."""
    return _DECODER.raw_decode(text, start)[0]


def plan_to_list(plan: Iterable[Op]) -> list[dict[str, Any]]:
    return [op.to_dict() for op in plan]


def files_touched(plan: Iterable[Op]) -> int:
    """Files a plan touches, for the thresholds. Ops act on single regular files only."""
    return sum(1 for op in plan if op.touches_file())


def write_paths(plan: Iterable[Op]) -> list[str]:
    return [p for op in plan for p in op.write_paths()]
