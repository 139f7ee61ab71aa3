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

from actions.ops import Identity, Op
from policies import limits as L
from policies.i18n import ngettext

#: Evidence lists are for a person to read: longer ones are cut with a count of the rest.
MAX_EVIDENCE = 40


@dataclass(frozen=True)
class PlanResult:
    """One finding: a suggestion-to-be, with its plan (empty for findings without file changes).

    The one form a finding has from its detector to the suggestions store: the loop reads it,
    recall and diagnosis return changed copies (``dataclasses.replace``), and the store encodes
    its plan once (actions.ops.encode_plan).

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
    #: The plan is the model's (agent.detectors.diagnose): it never runs without a person.
    by_model: bool = False

    def problem(self) -> str | None:
        """Why this finding cannot become a suggestion (a detector's bug), or None."""
        if not 1 <= len(self.kind) <= 64:
            return f"kind {self.kind!r} is not 1 to 64 characters"
        if not 1 <= len(self.title) <= 500:
            return f"title of {len(self.title)} characters"
        if len(self.target) > L.PATH_CHARS or len(self.reason) > L.REASON_CHARS:
            return "target or reason too long"
        if len(self.evidence) > 200 or self.files < 0:
            return "more than 200 evidence lines, or a negative count of files"
        if not 8 <= len(self.fingerprint) <= 128:
            return "fingerprint not 8 to 128 characters"
        if not all(isinstance(op, Op) for op in self.plan):
            return "its plan holds something that is not an op"
        return None


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
