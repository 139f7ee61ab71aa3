"""Plan builders: pure functions from a scan (:mod:`actions.scan`) to a :class:`PlanResult`.

They do no I/O (hashing for duplicates is done by the scan, :func:`actions.scan.with_sha256`),
so a plan is a function of what was seen, and the same tree gives the same plan and
fingerprint.
"""

from __future__ import annotations

from actions.planners.base import PlanResult, fingerprint, identity_key
from actions.planners.dedupe import plan_dedupe, size_candidates
from actions.planners.organize import destination_filter, folders_for, loose_files, plan_organize
from actions.planners.temp_cleanup import is_temp_name, plan_temp_cleanup

__all__ = [
    "PlanResult",
    "destination_filter",
    "fingerprint",
    "folders_for",
    "identity_key",
    "is_temp_name",
    "loose_files",
    "plan_dedupe",
    "plan_organize",
    "plan_temp_cleanup",
    "size_candidates",
]
