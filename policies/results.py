"""Every command's result, typed once: what the daemon returns, the wire carries as JSON (the
same keys, contract §3) and the views and the web panel read. A leaf of policies, so the stores
that make a record (state.suggestions, state.memory) and the clients that read one (control,
the panel) name the same type without importing each other.

TypedDicts, so a result is the plain dict the wire has always carried (nothing to convert on
either side), and a renamed key is a type error both where the daemon builds it and where a
view reads it. alma-ctl's modules import this only for the type checker (``TYPE_CHECKING``):
typing is not imported at their start. Fields the contract names are always present; the others
are ``NotRequired`` (a client reads them with ``.get``, which the type checker still holds to
the record's keys), so a reader works with whatever holds the contract.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict, cast, final

if TYPE_CHECKING:  # Literals for the type checker only (policies.kinds, policies.states)
    from policies.kinds import KindName
    from policies.states import ActionStatus, Level, SuggestionStatus

#: The memory layers (contract §3).
Layer = Literal["L-inf", "L1", "L0"]

#: Why a model's answer ended (agent.voice.model).
AnswerEnd = Literal["done", "cancelled", "max_tokens", "timeout"]

#: The JSON edge: an object as JSON gives it (a child process's or a server's answer, a
#: stored op), before it is read into a typed record, or as it is sent. Named, so a typed
#: record is never one by mistake.
JSONObject = dict[str, Any]


# -- suggestions ------------------------------------------------------------------------------
class Suggestion(TypedDict):
    """A suggestion as ``suggestions list`` gives it (contract §3), without its plan."""

    id: int
    kind: KindName
    status: SuggestionStatus
    title: str
    reason: str
    evidence: list[str]
    target: str
    files: int
    needs_approval: bool
    created_at: str
    updated_at: NotRequired[str]
    action_id: NotRequired[int | None]
    reject_reason: NotRequired[str | None]
    error: NotRequired[str | None]
    #: An executed suggestion whose action a person undid (policies.states.UNDONE).
    undone: NotRequired[bool]


class PlanFolder(TypedDict):
    op: str
    folder: str
    files: int


class PlanExtension(TypedDict):
    extension: str
    files: int


class PlanSummary(TypedDict):
    """A long plan in short (actions.summary.plan_summary)."""

    ops: dict[str, int]
    folders: list[PlanFolder]
    folders_more: int
    extensions: list[PlanExtension]
    extensions_more: int


class Diff(TypedDict):
    path: str
    diff: str


class SuggestionPlanned(Suggestion):
    """A suggestion with its plan, op by op as stored (JSON objects)."""

    plan: list[dict[str, object]]


class SuggestionShown(SuggestionPlanned):
    """``suggestions show``: the suggestion with its plan, summarized above a hundred ops, and
    the diffs of its edits."""

    plan_total: NotRequired[int]
    plan_summary: NotRequired[PlanSummary]
    diffs: NotRequired[list[Diff]]


class Skipped(TypedDict):
    """A finding the analysis did not propose, and why."""

    kind: str
    target: str
    title: str
    why: str
    #: The memory ids that decided it, if any.
    by: list[str]


@final
class Analysis(TypedDict):
    """``analyze --wait``: what was proposed, what was not and why, and what waits."""

    proposed: list[int]
    skipped: list[Skipped]
    pending: int


@final
class AnalysisStarted(TypedDict):
    """``analyze`` without ``--wait``."""

    started: bool


# -- actions ----------------------------------------------------------------------------------
class Action(TypedDict):
    """An action (contract §3): ``history``, ``accept``, ``undo``, ``trash restore``."""

    id: int
    suggestion_id: int | None
    kind: KindName
    status: ActionStatus
    ops: int
    auto: bool
    started_at: str
    finished_at: str | None
    undone_by: int | None
    undoes: NotRequired[int | None]
    error: NotRequired[str | None]
    sandbox: NotRequired[str]
    #: Why the action is not in acciones.md, when it is not.
    audit_problem: NotRequired[str | None]
    #: A backup restore's folder, or the folder its undo removed.
    to: NotRequired[str]
    #: The day's report: whether `undo` can still take it back (state.journal.undo_refusal).
    undoable: NotRequired[bool]


#: The keys every action carries (contract §3): what :func:`as_action` checks.
ACTION_KEYS = (
    "id",
    "suggestion_id",
    "kind",
    "status",
    "ops",
    "auto",
    "started_at",
    "finished_at",
    "undone_by",
)


def as_action(row: Mapping[str, object]) -> Action:
    """An action as the journal gives it (state.journal.action_json) as its typed record: the
    contract's keys checked, the rest carried as they are (a backup's snapshot, a restore's
    folder). The one place an untyped action becomes a typed one."""
    missing = [key for key in ACTION_KEYS if key not in row]
    if missing:
        raise ValueError(f"not an action: {', '.join(missing)} missing")
    return cast("Action", dict(row))


class BackupTaken(Action):
    """``backup now``: the backup's action and its snapshot."""

    snapshot: str | None
    files: int | None
    bytes: int | None


class BackupForgot(Action):
    """``backup forget``: the action and the snapshots the retention did not keep."""

    removed: list[str]


class BackupInit(TypedDict):
    target: str
    password_file: str
    created: bool


class BackupCheck(TypedDict):
    ok: bool
    target: str


class Snapshot(TypedDict):
    """A backup snapshot (contract §3)."""

    id: str
    time: str
    files: int | None
    bytes: int | None
    #: ``backup list --all``: whose it is.
    mine: NotRequired[bool]
    host: NotRequired[str]
    root: NotRequired[str | None]


class TrashEntry(TypedDict):
    action: int
    original: str | None
    trash: str
    trashed_at: str
    problem: NotRequired[str]


class TrashEmptied(TypedDict):
    removed: int
    older_than_days: int


# -- autonomy, the track record, feedback ----------------------------------------------------
class AutonomyStatus(TypedDict):
    configured: Level
    effective: Level
    paused: bool
    lowered_to: NotRequired[Level | None]
    auto_kinds: NotRequired[list[str]]
    auto_stopped_kinds: NotRequired[list[str]]


class Feedback(TypedDict):
    suggestion_id: int
    action_id: int | None
    kind: KindName
    feedback: Literal["useful", "useless"]
    reason: str | None


class KindCounts(TypedDict):
    """One kind's counts (policies.states.COUNTED_OUTCOMES)."""

    kind: str
    proposed: int
    accepted: int
    rejected: int
    undone: int
    useful: int
    useless: int


class FolderCounts(KindCounts):
    folder: str


class Stopped(TypedDict):
    kind: str
    folder: str
    why: str
    lift: str


class AutoStopped(TypedDict):
    kind: str
    why: str
    lift: str


class Promotable(TypedDict):
    kind: str
    accepted: int
    file: str
    section: str
    line: str


class Taken(TypedDict):
    """What ALMA took from a person's reason (agent.memory.recall)."""

    reason: str
    memory: str
    #: What the reason asks (agent.memory.reasons), "" for a principle written as such.
    intent: NotRequired[str]
    took: str
    undo: str


class TrackSummary(TypedDict):
    kinds: list[KindCounts]
    folders: list[FolderCounts]
    stopped: list[Stopped]
    auto_stopped: list[AutoStopped]
    promotable: list[Promotable]


class Stats(TrackSummary):
    """``stats``: the track record, and what ALMA took from a person's reasons."""

    reasons: NotRequired[list[Taken]]


class Break(TypedDict):
    suggestion_id: int
    kind: Literal["break"]
    at: str
    text: str
    shown: bool


class PendingTask(TypedDict):
    suggestion_id: int
    title: str
    reason: str


class Reminders(TypedDict):
    breaks: list[Break]
    pending_tasks: list[PendingTask]


class Report(TypedDict):
    """``report``: the day's analysis as written."""

    date: str
    path: str
    text: str
    written: bool
    written_at: NotRequired[str]


# -- memory -----------------------------------------------------------------------------------
class Why(TypedDict):
    """Why a search found a memory (agent.memory.search.Hit.why)."""

    cosine: float
    fused: float
    semantic_rank: int
    lexical_rank: int
    matched: list[str]


class Memory(TypedDict):
    """A memory (contract §3)."""

    id: str
    content: str
    tags: list[str]
    project: str
    theme: NotRequired[str]
    importance: int
    related_to: NotRequired[str]
    memory_type: str
    use_count: NotRequired[int]
    mentions: NotRequired[int]
    boosted: NotRequired[bool]
    created_at: NotRequired[str]
    source: NotRequired[str]
    layer: NotRequired[Layer]
    kind: NotRequired[str]
    day: NotRequired[str]
    event_date: NotRequired[str]
    reply_to: NotRequired[str]
    archived_at: NotRequired[str]
    archive_reason: NotRequired[str]
    merged_into: NotRequired[str]
    archived: NotRequired[bool]
    updated_at: NotRequired[str]
    #: ``memory search``: the ranking's estimate that it answers the query.
    score: NotRequired[float]
    #: ``memory search``: how it ranked and what matched.
    why: NotRequired[Why]
    #: ``memory add``: stored anew, or an existing memory said again.
    status: NotRequired[Literal["added", "reinforced", "existing"]]


class MemoryEdited(Memory):
    """``memory.edit``: the memory as the edit left it, and the action that undoes it."""

    action_id: int


class ContextItem(TypedDict):
    """One item of a context (agent.memory.context.Item.public)."""

    id: str
    content: str
    layer: Layer
    source: str
    memory_type: str
    tokens: int
    #: It answers the message (the chat quotes what answers).
    answers: NotRequired[bool]
    score: NotRequired[float]
    why: NotRequired[Why]
    created_at: NotRequired[str]


class Context(TypedDict):
    """``context``: what the chat gives the model for a prompt."""

    text: str
    principles_text: NotRequired[str]
    memories_text: NotRequired[str]
    items: list[ContextItem]
    tokens: NotRequired[int]
    budget_tokens: NotRequired[int]
    over_budget: NotRequired[bool]
    l0_searched: NotRequired[bool]
    answered: NotRequired[bool]


class ExamplesAdded(TypedDict):
    added: int


class MemoryStats(TypedDict):
    """``memory stats``: the counts of the catalog and the embedder."""

    total: int
    archived: int
    by_tag: dict[str, int]
    by_project: dict[str, int]
    by_memory_type: dict[str, int]
    by_layer: dict[str, int]
    embedder: str


class ExportSummary(TypedDict):
    examples: int
    train: int
    valid: int
    tokens: int
    tokens_estimated: bool
    dropped: dict[str, int]
    system: bool


class Withheld(TypedDict):
    """An example left out of an export, masked (agent.memory.export)."""

    id: str
    day: str
    why: str
    kinds: list[str]
    preview: str


class MemoryExport(TypedDict):
    """``memory export``: the examples in the format asked, and what was withheld
    (agent.memory.export); ``listing``: only what would be withheld was asked."""

    format: str
    split: bool
    #: The examples in the format asked (chatml's ``messages``, alpaca's fields...).
    train: list[dict[str, object]]
    valid: list[dict[str, object]]
    summary: ExportSummary
    withheld: list[Withheld]
    listing: NotRequired[bool]


# -- the model, the chat, the daemon ---------------------------------------------------------
class ModelStatus(TypedDict):
    """``model status`` (contract §2)."""

    path: str | None
    backend: str | None
    loaded: bool
    n_ctx: int | None
    threads: int | None
    tokens_per_second: NotRequired[float | None]
    busy: NotRequired[bool]
    state: NotRequired[str]
    crashes: NotRequired[int]
    embedded: NotRequired[bool]
    lora: NotRequired[str]
    lora_in_use: NotRequired[bool]
    pid: NotRequired[int]
    confined: NotRequired[str]
    last_failure: NotRequired[str]
    error: NotRequired[str]
    #: Why the model was given up (it stays so across restarts until ``model use``).
    unusable: NotRequired[str]


class ChatAnswer(TypedDict):
    """``chat.send``'s answer, after its events: what the person was shown and why it ended."""

    text: str
    #: Why it ended: the model's reason, or ``loop`` when the check cut a repeating answer.
    stopped: AnswerEnd | Literal["loop"]
    tokens: int
    ms: int
    first_token_ms: int | None
    model: str
    prompt_tokens: int
    turns_dropped: int
    message_cut: bool
    known: int
    answered: bool
    language: str
    invented_citations: list[str]
    dropped: int
    #: What was left out of the answer and why, in the message's language ("" when nothing).
    dropped_note: str
    logged: bool


class ChatStart(TypedDict):
    session: str
    pending: list[Suggestion]
    model: ModelStatus


class PolicyState(TypedDict):
    """The policy in force: its file, when it was loaded, the file's error when not valid."""

    file: str
    ok: bool
    loaded_at: str
    error: str | None


class Reloaded(TypedDict):
    """What the daemon's files read again changed (agent.daemon.Reload)."""

    restart_needed: list[str]
    settings_error: str | None


class ReloadResult(Reloaded):
    """``reload``."""

    policy: PolicyState


class WatchStatus(TypedDict):
    """The folder watches (agent.watch.Watcher.status)."""

    ready: bool
    folders: int | None
    watches: int | None
    limit: int | None
    unwatched: int
    setup_seconds: float | None
    warning: str | None


class Status(TypedDict):
    """``status`` (contract §3); with the daemon not running, ``{"running": false, ...}``."""

    running: bool
    ready: NotRequired[bool]
    pid: NotRequired[int]
    version: NotRequired[str]
    root: NotRequired[str]
    socket: NotRequired[str]
    autonomy: NotRequired[AutonomyStatus]
    sandbox: NotRequired[str]
    sandbox_detail: NotRequired[str]
    pending_suggestions: NotRequired[int]
    last_analysis: NotRequired[str | None]
    memories: NotRequired[int | None]
    memory: NotRequired[str]
    model: NotRequired[ModelStatus]
    policy: NotRequired[PolicyState]
    audit_problem: NotRequired[str | None]
    recovered_at_start: NotRequired[list[dict[str, object]]]
    uptime_seconds: NotRequired[float]
    watch: NotRequired[WatchStatus]


class Day(TypedDict):
    """One day of ``report.days``'s answer."""

    date: str
    hours: float
    messages_by_hour: list[int]
    mood: float | None
    suggestions: dict[str, dict[str, int]]


class DaysReport(TypedDict):
    """``report.days``'s answer: the days, oldest first, and the outcomes in the order the
    plots stack them."""

    days: list[Day]
    outcomes: list[str]
