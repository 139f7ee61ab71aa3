"""The zone rule: which root-relative paths may be written, and how a zone is spelled.

Its own module, importing nothing heavy, because the confined executor checks every path of a
plan against it and starts once per action: ``policies.config`` would bring pydantic and
pydantic-settings into every action's fixed cost.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from policies.i18n import _
from policies.layout import HARD_READ_ONLY


@lru_cache(maxsize=1024)
def split_zone(zone: str) -> tuple[str, ...]:
    """A zone as path components; raises ValueError with the fix when it is not a plain path."""
    if not zone or zone.startswith("/") or "\\" in zone or "\x00" in zone:
        raise ValueError(
            _(
                "zone {zone} must be a folder relative to the ALMA root, like 'user'",
                zone=repr(zone),
            )
        )
    parts = tuple(p for p in zone.split("/") if p != "")
    if not parts or any(p in (".", "..") for p in parts):
        raise ValueError(
            _(
                "zone {zone} must name a folder inside the ALMA root, without '.' or '..'",
                zone=repr(zone),
            )
        )
    return parts


class ZoneCheck:
    """The zone rule, its one owner: may ``relpath`` be written? The gate asks it of a policy's
    zones, the confined executor of the zones it is given on its command line, and both
    get the same answer. Zones are split once, to check many paths: a plan names two paths a
    move, and splitting every zone again for each would be most of the gate's time."""

    __slots__ = ("_read_only", "_read_only_prefixes", "_writable", "_writable_names")

    def __init__(self, writable: Sequence[str], read_only: Sequence[str]) -> None:
        # Components are checked before the zones are, so a plain string prefix "a/b/" matches
        # exactly the paths whose leading components are the zone's (str.startswith takes all
        # the zones in one call). system/ and .alma/ are read-only whatever the lists say.
        ro = [*read_only, *(z for z in HARD_READ_ONLY if z not in read_only)]
        self._read_only = ["/".join(split_zone(z)) for z in ro]
        self._read_only_prefixes = tuple(z + "/" for z in self._read_only)
        self._writable = tuple("/".join(split_zone(z)) + "/" for z in writable)
        self._writable_names = ", ".join(z.rstrip("/") for z in self._writable)

    def problem(self, relpath: str) -> str | None:
        """Why ``relpath`` may not be written, or None when it may (lexical check)."""
        if not relpath or relpath.startswith("/"):
            return _("{path} is not a path relative to the ALMA root", path=repr(relpath))
        parts = relpath.split("/")
        if "" in parts or "." in parts or ".." in parts:
            return _("{path} contains an empty, '.' or '..' component", path=repr(relpath))
        if "\x00" in relpath:
            return _("{path} contains a NUL byte", path=repr(relpath))
        if relpath in self._read_only or relpath.startswith(self._read_only_prefixes):
            zone = next(
                ro for ro in self._read_only if relpath == ro or relpath.startswith(ro + "/")
            )
            return _("{path} is inside the read-only zone {zone}/", path=repr(relpath), zone=zone)
        # A zone itself is never a target, only what is inside it: "user/" + something.
        if relpath.startswith(self._writable):
            return None
        return _(
            "{path} is outside the writable zones ({zones})",
            path=repr(relpath),
            zones=self._writable_names,
        )
