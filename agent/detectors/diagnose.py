"""A repeated failure explained from the files, without a model.

For a ``repeated_failure`` finding: the script its log names (or the one named like the log:
``backup.log``, ``backup.sh``) is looked for in ``user/`` and ``system/`` (a bounded scan,
never through a link), and the configuration files beside it
(``*.conf``, ``*.cfg``, ``*.ini``, ``*.toml``, ``*.yaml``, ``*.yml``, ``*.json``, ``*.env``).
When the failing lines, or the tool's own lines beside them (:mod:`agent.detectors.failures`
puts them in the evidence), name an absolute path that does not exist, its first missing part
(the folder of a missing archive) is named by a configuration line, and the folder above it
holds one close name (a typo, a renamed disk), the suggestion says so with the file, the line,
and the value it should probably have.

When that is the whole story (one wrong path with one close name, named on exactly one line of
one configuration file in a writable zone), the plan is an ``edit`` of that file changing only
that value: the bytes of every other line, the encoding and the line endings are kept, and
undo brings the file back byte for byte. No model is needed. Anything less certain stays a
note, the change the person's to make (an empty plan), unless a model is loaded: then it may
propose a unified diff of those configuration files, used only when it applies exactly
(agent.detectors.patch) to files in a writable zone beside the script, each read whole.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

from actions.ops import Create, Edit, Identity, plan_from_list
from actions.planners.base import PlanResult
from actions.safe_read import read_file
from actions.scan import find_named, scan_tree
from actions.tree import Tree
from agent.detectors.failures import ABS_PATH
from agent.detectors.patch import apply_unified_diff
from agent.voice.model import Complete
from policies import kinds
from policies import limits as L
from policies.errors import RefusedError
from policies.i18n import _
from policies.limits import EDIT_BYTES
from policies.results import Diff, JSONObject

_SCRIPT_EXTS = ("sh", "py", "pl", "rb", "js", "ts", "php", "bash", "ps1")
_SCRIPT = re.compile(rf"(?<![\w/.-])([\w.-]+\.(?:{'|'.join(_SCRIPT_EXTS)}))\b")
_CONFIG_EXT = (".conf", ".cfg", ".ini", ".toml", ".yaml", ".yml", ".json", ".env")
_SEARCH = ("user", "system")
_CONFIG_BYTES = 256 << 10


def _find_script(tree: Tree, names: list[str]) -> str | None:
    for zone in _SEARCH:
        try:
            found = find_named(tree, zone, names)
        except (FileNotFoundError, NotADirectoryError, RefusedError):
            continue
        for name in names:
            if name in found:
                return found[name]
    return None


class _Config(NamedTuple):
    path: str
    data: bytes
    #: The file as read, sha256 included; None when the read is not the whole file as scanned
    #: (it changed in between, or is longer than read): then it is never edited.
    identity: Identity | None

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


def _configs(tree: Tree, script: str) -> list[_Config]:
    folder = script.rpartition("/")[0]
    try:
        scan = scan_tree(tree, folder, now=time.time(), settle_seconds=None, max_depth=0)
    except (FileNotFoundError, NotADirectoryError, RefusedError):
        return []
    out = []
    for f in scan.files:
        if f.path.rpartition("/")[0] == folder and f.name.endswith(_CONFIG_EXT):
            read = read_file(tree, f.path, limit=_CONFIG_BYTES)
            if read is None:
                continue
            whole = (len(read.data), read.size, read.mtime_ns) == (
                f.identity.size,
                f.identity.size,
                f.identity.mtime_ns,
            )
            sha = hashlib.sha256(read.data).hexdigest()
            out.append(
                _Config(f.path, read.data, f.identity._replace(sha256=sha) if whole else None)
            )
    return sorted(out)


def _names(missing: str) -> re.Pattern[str]:
    """A line names ``missing``: the whole path, not a prefix of a longer name (/mnt/disco in
    /mnt/disco2 or /mnt/disco.log); what the note says and the edit changes are the same."""
    return re.compile(re.escape(missing) + r"(?![\w.+-])")


def _fixed(config: _Config, missing: str, close: str) -> bytes | None:
    """The file with ``missing`` replaced by ``close`` on its one line that names it, every
    other byte kept (encoding, line endings); None unless exactly one line names it."""
    wrong, right = os.fsencode(missing), os.fsencode(close)
    # The whole path, not a prefix of a longer one (/media/disco in /media/disco2).
    pattern = re.compile(re.escape(wrong) + rb"(?![\w.+-])")
    lines = config.data.splitlines(keepends=True)
    hits = [i for i, line in enumerate(lines) if pattern.search(line)]
    if len(hits) != 1:
        return None
    lines[hits[0]] = pattern.sub(lambda _m: right, lines[hits[0]])
    return b"".join(lines)


def _fix_plan(
    configs: list[_Config], fixes: list[tuple[str, str, str]], writable: Callable[[str], bool]
) -> list[Edit]:
    """The edit that makes the fix, when there is exactly one (config path, missing, close) and
    its file may be written and was read whole; else nothing."""
    if len(fixes) != 1:
        return []
    path, missing, close = fixes[0]
    config = next(c for c in configs if c.path == path)
    if config.identity is None or not writable(path) or len(config.data) > EDIT_BYTES:
        return []
    new = _fixed(config, missing, close)
    return [] if new is None else [Edit(path, config.identity, new)]


def _first_missing(path: str) -> str | None:
    """The first part of ``path`` that does not exist (``/mnt/ALMA_BACKUP`` of a missing
    ``/mnt/ALMA_BACKUP/alma-1.tar.gz``: the folder a configuration names); None if it exists."""
    if os.path.lexists(path):
        return None
    parent = path.rpartition("/")[0]
    while parent and not os.path.lexists(parent):
        path, parent = parent, parent.rpartition("/")[0]
    return path


def _close_name(missing: str) -> str | None:
    parent, _slash, name = missing.rstrip("/").rpartition("/")
    try:
        entries = os.listdir(parent or "/")
    except OSError:
        return None
    close = difflib.get_close_matches(name, entries, n=2, cutoff=0.8)
    return f"{parent}/{close[0]}" if len(close) == 1 else None


def _never(relpath: str) -> bool:
    return False


#: What the model is asked for a repeated failure no rule explains.
_PROMPT = (
    "A script on the user's computer fails again and again. You see the failing log lines, the "
    "script, and its configuration files. If a change to the configuration files fixes the "
    "cause, answer with only a unified diff of those files (--- a/PATH, +++ b/PATH, @@ hunks "
    "with exact context lines). If you are not sure, answer NONE. Never change the script."
)
#: A config fix is a few lines; the wait is short because the analysis (and a daemon asked
#: to stop meanwhile) waits for it, and a chat turn waits while it generates.
_MODEL_TOKENS = 400
_MODEL_TIMEOUT_S = 20.0
_SCRIPT_CHARS = 4_000


def _model_plan(
    root: Path,
    finding: PlanResult,
    script: str,
    configs: list[_Config],
    writable: Callable[[str], bool],
    complete: Complete,
) -> list[Edit]:
    """Edits from the model's diff, when it applies exactly to configs it may write; else []."""
    offered = {
        c.path: c.data
        for c in configs
        if c.identity is not None and writable(c.path) and len(c.data) <= EDIT_BYTES
    }
    if not offered:
        return []
    with Tree(root) as tree:
        read = read_file(tree, script, limit=_SCRIPT_CHARS)
    parts = ["Failing lines:", *finding.evidence[:20], f"\nScript {script}:"]
    parts.append(read.data.decode("utf-8", errors="replace") if read else "(unreadable)")
    for path, data in offered.items():
        parts += [f"\nConfiguration {path}:", data.decode("utf-8", errors="replace")]
    answer = complete(
        [{"role": "system", "content": _PROMPT}, {"role": "user", "content": "\n".join(parts)}],
        max_tokens=_MODEL_TOKENS,
        timeout_s=_MODEL_TIMEOUT_S,
    )
    changed = apply_unified_diff(answer, offered) if answer else None
    if not changed:
        return []
    identities = {c.path: c.identity for c in configs if c.identity is not None}
    return [Edit(path, identities[path], data) for path, data in sorted(changed.items())]


def explain_failure(
    root: Path,
    finding: PlanResult,
    *,
    writable: Callable[[str], bool] = _never,
    complete: Complete | None = None,
) -> PlanResult:
    """The finding with what the files say about it (unchanged when they say nothing), and the
    plan that fixes it when the files say exactly one thing (see the module's words).
    ``writable``: whether the policy lets an action write a root-relative path; ``complete``:
    the daemon's model, asked only when no rule found the fix."""
    if not kinds.of(finding.kind).explained:
        return finding
    lines = "\n".join(finding.evidence)
    stem = finding.target.rpartition("/")[2].removesuffix(".log")
    names = _SCRIPT.findall(lines) or _SCRIPT.findall(finding.title)
    names += [f"{stem}.{ext}" for ext in _SCRIPT_EXTS]  # backup.log is backup.sh's log
    found = (_first_missing(p.rstrip("/")) for p in ABS_PATH.findall(lines))
    paths = [p for p in found if p is not None]
    if not names:
        return finding
    with Tree(root) as tree:
        script = _find_script(tree, list(dict.fromkeys(names)))
        if script is None:
            return finding
        configs = _configs(tree, script)
    notes: list[str] = []
    fixes: list[tuple[str, str, str]] = []
    reason = finding.reason
    for missing in dict.fromkeys(paths):
        close = _close_name(missing)
        for config in configs:
            path = config.path
            for number, line in enumerate(config.text.splitlines(), start=1):
                if not _names(missing).search(line):
                    continue
                if close is None:
                    notes.append(
                        _(
                            "{where}: {line} ({missing} does not exist)",
                            where=f"{path}:{number}",
                            line=line.strip(),
                            missing=missing,
                        )
                    )
                    continue
                fixed = line.replace(missing, close).strip()
                if (path, missing, close) not in fixes:
                    fixes.append((path, missing, close))
                notes.append(
                    _(
                        "{where}: {line} ({missing} does not exist; {close} does)",
                        where=f"{path}:{number}",
                        line=line.strip(),
                        missing=missing,
                        close=close,
                    )
                )
                reason = _(
                    "{reason}. {missing} does not exist and {where} names it; {close} exists: "
                    "perhaps the line should be {fixed}",
                    reason=reason,
                    missing=missing,
                    where=f"{path}:{number}",
                    close=close,
                    fixed=fixed,
                )
    plan = _fix_plan(configs, fixes, writable)
    if not plan and complete is not None and configs:
        plan = _model_plan(root, finding, script, configs, writable, complete)
        if plan:
            return _with_model_plan(finding, script, configs, notes, reason, plan)
    if not notes:
        return finding
    where = [
        _("The script: {path}", path=script),
        _("Its configuration: {paths}", paths=", ".join(c.path for c in configs)),
    ]
    if plan:
        path, missing, close = fixes[0]
        where.append(
            _(
                "The plan edits {path}: {missing} becomes {close} on that line only; the old "
                "version goes to ALMA's trash and `alma-ctl undo` brings it back.",
                path=path,
                missing=missing,
                close=close,
            )
        )
    return replace(
        finding,
        evidence=[*finding.evidence, *where, *notes],
        reason=reason[: L.REASON_CHARS],
        plan=list(plan) if plan else finding.plan,
        files=len(plan) if plan else finding.files,
    )


def _with_model_plan(
    finding: PlanResult,
    script: str,
    configs: list[_Config],
    notes: list[str],
    reason: str,
    plan: list[Edit],
) -> PlanResult:
    where = [
        _("The script: {path}", path=script),
        _("Its configuration: {paths}", paths=", ".join(c.path for c in configs)),
        _(
            "The plan is the model's change to {paths}, checked: it applies exactly to the files "
            "as they are; `alma-ctl suggestions show` prints it, `alma-ctl undo` takes it back.",
            paths=", ".join(op.path for op in plan),
        ),
    ]
    return replace(
        finding,
        evidence=[*finding.evidence, *where, *notes],
        reason=reason[: L.REASON_CHARS],
        plan=list(plan),
        files=len(plan),
        by_model=True,  # model output: a person decides, whatever the level
    )


def _decoded(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")  # every byte a character: the diff still shows the line


def edit_diffs(root: Path, plan: list[JSONObject]) -> list[Diff]:
    """For each ``edit`` of a plan, the unified diff of the file as it is now and the content
    the edit writes (what `suggestions show` prints), or a sentence when the file changed since
    the plan was made (accepting would refuse); for each ``create``, its whole content as added
    lines, or a sentence when a file is at its path already."""
    ops = [op for op in plan_from_list(plan) if isinstance(op, Edit | Create)]
    if not ops:
        return []
    out: list[Diff] = []
    with Tree(root) as tree:
        for op in ops:
            if isinstance(op, Create):
                out.append({"path": op.path, "diff": _created(tree, op)})
                continue
            read = read_file(tree, op.path, limit=EDIT_BYTES + 1)
            if read is None or hashlib.sha256(read.data).hexdigest() != op.expect.sha256:
                text = _(
                    "{path} changed since this plan was made; accepting it would change "
                    "nothing, and a new analysis proposes a fresh plan.",
                    path=op.path,
                )
            else:
                lines = difflib.unified_diff(
                    _decoded(read.data).splitlines(keepends=True),
                    _decoded(op.content).splitlines(keepends=True),
                    fromfile=f"a/{op.path}",
                    tofile=f"b/{op.path}",
                )
                text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
            out.append({"path": op.path, "diff": text})
    return out


def _created(tree: Tree, op: Create) -> str:
    if tree.lstat(op.path) is not None:
        return _(
            "{path} already exists; ALMA never writes over a file, so accepting would change "
            "nothing.",
            path=op.path,
        )
    lines = difflib.unified_diff(
        [], _decoded(op.content).splitlines(keepends=True), "/dev/null", f"b/{op.path}"
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
