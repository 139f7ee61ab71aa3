"""A repeated failure explained from the files, without a model.

For a ``repeated_failure`` finding: the script its log names (or the one named like the log:
``backup.log``, ``backup.sh``) is looked for in ``user/`` and ``system/`` (a bounded scan,
never through a link), and the configuration files beside it
(``*.conf``, ``*.cfg``, ``*.ini``, ``*.toml``, ``*.yaml``, ``*.yml``, ``*.json``, ``*.env``).
When the failing lines name an absolute path that does not exist, a configuration line names
that same path, and the folder above it holds one close name (a typo, a renamed disk), the
suggestion says so with the file, the line, and the value it should probably have. The change
itself stays the person's to make (an empty plan).
"""

from __future__ import annotations

import difflib
import os
import re
import time
from pathlib import Path
from typing import Any

from actions.scan import read_file, scan_tree
from actions.tree import Tree
from policies import limits as L
from policies.errors import RefusedError
from policies.i18n import _

_SCRIPT_EXTS = ("sh", "py", "pl", "rb", "js", "ts", "php", "bash", "ps1")
_SCRIPT = re.compile(rf"(?<![\w/.-])([\w.-]+\.(?:{'|'.join(_SCRIPT_EXTS)}))\b")
_ABS_PATH = re.compile(r"""(?<![\w.])(/(?:[\w.+-]+/?)+)""")
_CONFIG_EXT = (".conf", ".cfg", ".ini", ".toml", ".yaml", ".yml", ".json", ".env")
_SEARCH = ("user", "system")
_MAX_FILES = 20_000
_CONFIG_BYTES = 256 << 10


def _find_script(tree: Tree, names: list[str]) -> str | None:
    for zone in _SEARCH:
        try:
            scan = scan_tree(tree, zone, now=time.time(), settle_seconds=None, max_files=_MAX_FILES)
        except (FileNotFoundError, NotADirectoryError, RefusedError):
            continue
        found = {f.name: f.path for f in scan.files if f.name in names}
        for name in names:
            if name in found:
                return found[name]
    return None


def _configs(tree: Tree, script: str) -> list[tuple[str, str]]:
    folder = script.rpartition("/")[0]
    try:
        scan = scan_tree(tree, folder, now=time.time(), settle_seconds=None, max_depth=0)
    except (FileNotFoundError, NotADirectoryError, RefusedError):
        return []
    out = []
    for f in scan.files:
        if f.path.rpartition("/")[0] == folder and f.name.endswith(_CONFIG_EXT):
            read = read_file(tree, f.path, limit=_CONFIG_BYTES)
            if read is not None:
                out.append((f.path, read.data.decode("utf-8", errors="replace")))
    return sorted(out)


def _close_name(missing: str) -> str | None:
    parent, _slash, name = missing.rstrip("/").rpartition("/")
    try:
        entries = os.listdir(parent or "/")
    except OSError:
        return None
    close = difflib.get_close_matches(name, entries, n=2, cutoff=0.8)
    return f"{parent}/{close[0]}" if len(close) == 1 else None


def explain_failure(root: Path, finding: dict[str, Any]) -> dict[str, Any]:
    """The finding with what the files say about it (unchanged when they say nothing)."""
    if finding["kind"] != "repeated_failure":
        return finding
    lines = "\n".join(finding["evidence"])
    stem = str(finding["target"]).rpartition("/")[2].removesuffix(".log")
    names = _SCRIPT.findall(lines) or _SCRIPT.findall(finding["title"])
    names += [f"{stem}.{ext}" for ext in _SCRIPT_EXTS]  # backup.log is backup.sh's log
    paths = [p.rstrip("/") for p in _ABS_PATH.findall(lines) if not os.path.lexists(p)]
    if not names:
        return finding
    with Tree(root) as tree:
        script = _find_script(tree, list(dict.fromkeys(names)))
        if script is None:
            return finding
        configs = _configs(tree, script)
    notes: list[str] = []
    reason = finding["reason"]
    for missing in dict.fromkeys(paths):
        close = _close_name(missing)
        for path, text in configs:
            for number, line in enumerate(text.splitlines(), start=1):
                if missing not in line:
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
    if not notes:
        return finding
    where = [
        _("The script: {path}", path=script),
        _("Its configuration: {paths}", paths=", ".join(p for p, _text in configs)),
    ]
    return {
        **finding,
        "evidence": [*finding["evidence"], *where, *notes],
        "reason": reason[: L.REASON_CHARS],
    }
