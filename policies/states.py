"""The words of a suggestion's life and of autonomy, as the store, the policy and the socket's
commands spell them (contract §3, §4).

Plain tuples, which the policy, the store and the command table all read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

#: A suggestion's status in the store; ``suggestions list --status`` takes one of them.
SUGGESTION_STATUSES = ("pending", "accepted", "rejected", "executed", "failed", "expired")

#: How an ``executed`` suggestion whose action a person undid reads: derived from the track
#: record (its ``undone`` outcome for that action), never stored, so the store's statuses stay
#: the contract's. The answers carry it as ``"undone": true`` beside the status.
UNDONE = "undone"

#: An action's status in the journal (contract §3).
ACTION_STATUSES = ("running", "done", "failed", "rolled_back", "undone")

#: Autonomy levels, lowest first: a level may only be lowered at run time.
LEVELS = ("off", "manual", "suggest", "auto")

#: What the track record stores for each kind (and folder); a later ``feedback`` replaces an
#: earlier verdict. ``lifted``: a person allowed a stopped kind (or folder) again, which
#: starts its count anew.
OUTCOMES = ("proposed", "accepted", "rejected", "undone", "useful", "useless", "lifted")

#: The outcomes ``stats`` counts and shows.
COUNTED_OUTCOMES = OUTCOMES[:6]

#: LEVELS for the type checker (the policy's field is built from LEVELS at run time).
Level = Literal["off", "manual", "suggest", "auto"]
#: SUGGESTION_STATUSES, ACTION_STATUSES and OUTCOMES for the type checker
#: (tests/unit/test_states.py holds each equal to its tuple).
SuggestionStatus = Literal["pending", "accepted", "rejected", "executed", "failed", "expired"]
ActionStatus = Literal["running", "done", "failed", "rolled_back", "undone"]
Outcome = Literal["proposed", "accepted", "rejected", "undone", "useful", "useless", "lifted"]


def shown_status(suggestion: Mapping[str, object]) -> object:
    """The status a person reads for ``suggestion`` (an answer's dict)."""
    return UNDONE if suggestion.get("undone") else suggestion.get("status")


def level_rank(level: str) -> int:
    """How high ``level`` is: "off" is 0."""
    return LEVELS.index(level)
