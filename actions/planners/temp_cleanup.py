"""``temp_cleanup``: old temporary files to ALMA's trash (restorable by undo).

The list is deliberately short: only names that programs create for themselves and forget,
never something a person may have made on purpose.

- ``*.tmp``, ``*.temp``: temp files left by installers, editors, downloads that crashed;
- ``*~``: editor backups (emacs, gedit, kate);
- ``.~lock.*#``: LibreOffice lock files; ``~$*``: Microsoft Office owner files;
- ``*.swp``, ``*.swo``: vim swap files. They can hold unsaved edits after a crash, but one
  older than ``temp_age_days`` has been abandoned, and the trash keeps it restorable;
- ``.DS_Store``, ``Thumbs.db``, ``ehthumbs.db``: folder metadata caches (macOS, Windows).

Left out on purpose: ``*.bak`` (often the only old copy a person or a tool kept on purpose),
``._*`` (AppleDouble files carry metadata on foreign disks), ``desktop.ini`` (a folder's
customization), ``*.part``/``*.crdownload`` (downloads that may still be resumed).

"Old" is ``mtime`` older than ``temp_age_days`` days before ``now`` (0 means any age; the scan
already left out files newer than ``settle_seconds``).
"""

from __future__ import annotations

from collections.abc import Iterable

from actions.ops import Op, Trash
from actions.planners.base import (
    PlanResult,
    cap_evidence,
    fingerprint,
    identity_key,
)
from actions.scan import ScannedFile
from policies.i18n import _, ngettext

KIND = "temp_cleanup"
_SUFFIXES = (".tmp", ".temp", ".swp", ".swo")
_EXACT = frozenset({".ds_store", "thumbs.db", "ehthumbs.db"})


def is_temp_name(name: str) -> bool:
    lower = name.lower()
    if lower in _EXACT:
        return True
    if lower.endswith(_SUFFIXES) and len(lower) > len(lower.rpartition(".")[2]) + 1:
        return True
    if name.startswith(".~lock.") and name.endswith("#"):
        return True
    if name.startswith("~$") and len(name) > 2:
        return True
    return name.endswith("~") and len(name) > 1 and not name.startswith("~")


def plan_temp_cleanup(
    target: str,
    files: Iterable[ScannedFile],
    *,
    now: float,
    age_days: int,
    max_ops: int | None = None,
) -> PlanResult | None:
    """Trash ops for the temp files among ``files`` older than ``age_days``; None if there are none."""
    cutoff_ns = int((now - age_days * 86_400) * 1_000_000_000)
    old = sorted(
        (f for f in files if is_temp_name(f.name) and f.identity.mtime_ns <= cutoff_ns),
        key=lambda f: f.path,
    )
    if not old:
        return None
    evidence: list[str] = []
    if max_ops is not None and len(old) > max_ops:
        evidence.append(
            _(
                "Only the first {count} of {total} (the limit of one plan); the rest, later.",
                count=max_ops,
                total=len(old),
            )
        )
        old = old[:max_ops]
    plan: list[Op] = [Trash(path=f.path, expect=f.identity) for f in old]
    evidence += cap_evidence([f"{f.path} ({_age(now, f)})" for f in old])
    return PlanResult(
        kind=KIND,
        target=target,
        title=_("Clean up temporary files in {folder}", folder=target),
        reason=ngettext(
            "{n} temporary file older than {age}",
            "{n} temporary files older than {age}",
            len(old),
            age=ngettext("{n} day", "{n} days", age_days),
        ),
        evidence=evidence,
        plan=plan,
        files=len(plan),
        fingerprint=fingerprint(KIND, target, (identity_key(f.path, f.identity) for f in old)),
    )


def _age(now: float, f: ScannedFile) -> str:
    days = int((now - f.identity.mtime_ns / 1e9) // 86_400)
    return ngettext("unchanged for {n} day", "unchanged for {n} days", days)
