"""What every planner returns, and the fingerprint that recognizes a finding again.

Titles, reasons and evidence are in the person's language (:mod:`policies.i18n`: the daemon's
language while it analyses); ``kind`` names stay as the contract spells them (``organize``,
``duplicates``...), because scripts match on them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from actions.ops import Identity, Op, plan_to_list
from policies.i18n import ngettext

#: Evidence lists are for a person to read: longer ones are cut with a count of the rest.
MAX_EVIDENCE = 40


@dataclass(frozen=True)
class PlanResult:
    """One finding: a suggestion-to-be, with its plan (empty for findings without file changes).

    ``fingerprint`` is a stable hash of (kind, target, what the plan depends on): the same
    finding gives the same fingerprint on every scan, and any change to a file it depends on
    (or a different target) gives a new one.
    """

    kind: str
    target: str  # root-relative folder, log path or script name
    title: str
    reason: str
    evidence: list[str]
    plan: list[Op]
    files: int
    fingerprint: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "target": self.target,
            "title": self.title,
            "reason": self.reason,
            "evidence": list(self.evidence),
            "plan": plan_to_list(self.plan),
            "files": self.files,
            "fingerprint": self.fingerprint,
        }


def identity_key(path: str, ident: Identity) -> str:
    """What a plan depends on for one file. ``dev`` and ``boot`` are left out on purpose: a
    portable disk comes back with another device number, and it is still the same finding."""
    return f"{path}\x00{ident.ino}\x00{ident.size}\x00{ident.mtime_ns}\x00{ident.sha256 or ''}"


def fingerprint(kind: str, target: str, keys: Iterable[str]) -> str:
    payload = json.dumps([kind, target, sorted(keys)], ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(payload.encode("ascii")).hexdigest()


def cap_evidence(lines: list[str], limit: int = MAX_EVIDENCE) -> list[str]:
    if len(lines) <= limit:
        return lines
    rest = len(lines) - (limit - 1)
    return [*lines[: limit - 1], ngettext("… and {n} more", "… and {n} more", rest)]
