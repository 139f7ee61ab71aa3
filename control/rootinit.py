"""``alma-ctl init``: the root's folders and default files, made without a daemon, and the
example memories asked of the daemon (contract §1). Standard library and policies only.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from control.commands import COMMANDS
from control.protocol import daemon_start_hint
from policies.errors import AlmaError
from policies.i18n import _
from policies.modes import PRIVATE_FILE, SHARED_FILE

if TYPE_CHECKING:
    from pathlib import Path

    from policies.layout import RootLayout


def write_new(path: str | os.PathLike[str], data: bytes, mode: int = SHARED_FILE) -> bool:
    """Write a file that must not exist yet; False (and nothing written) if it does."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    return True


def init_root(root: Path, with_examples: bool) -> tuple[dict[str, object], str]:
    """Create the root's folders and default files, keeping what exists; the JSON document
    and the sentence for a person."""
    from policies.defaults import DEFAULT_PERSONA_MD, DEFAULT_POLICY_TOML, DEFAULT_PRINCIPLES_MD
    from policies.layout import ROOT_FOLDERS, RootLayout
    from policies.modes import SHARED_DIR, ensure_private_dir

    if root.exists() and not root.is_dir():
        raise AlmaError(_("{path} exists and is not a folder; choose another --root.", path=root))
    layout = RootLayout(root)
    created: list[str] = []
    kept: list[str] = []
    root.mkdir(parents=True, exist_ok=True)
    for folder in ROOT_FOLDERS:
        path = root / folder
        if path == layout.data:  # private data: created or narrowed to 0700, never left loose
            existed = path.is_dir()
            try:
                ensure_private_dir(path)
            except PermissionError as exc:
                raise AlmaError(str(exc)) from None
            (kept if existed else created).append(folder + "/")
            continue
        try:
            path.mkdir(mode=SHARED_DIR)
            created.append(folder + "/")
        except FileExistsError:
            if not path.is_dir():
                raise AlmaError(
                    _("{path} exists and is not a folder; move it away.", path=path)
                ) from None
            kept.append(folder + "/")
    for path, text in (
        (layout.policy_file, DEFAULT_POLICY_TOML),
        (layout.principles_file, DEFAULT_PRINCIPLES_MD),
        (layout.persona_file, DEFAULT_PERSONA_MD),
    ):
        rel = path.relative_to(root).as_posix()
        (created if write_new(path, text.encode("utf-8")) else kept).append(rel)
    result: dict[str, object] = {"root": str(root), "created": created, "kept": kept}
    made = ", ".join(created) or _("nothing")
    if kept:
        human = _(
            "ALMA root {root}: created {created}; kept existing {kept}.",
            root=root,
            created=made,
            kept=", ".join(kept),
        )
    else:
        human = _("ALMA root {root}: created {created}.", root=root, created=made)
    if with_examples:
        result["examples"], note = _examples(layout)
        human += "\n" + note
    human += "\n" + _("Start the daemon with `{command}`.", command=daemon_start_hint(root))
    return result, human


def _examples(layout: RootLayout) -> tuple[object, str]:
    """The running daemon stores the examples now; without one, a request in the root has the
    daemon store them when its memory store loads (agent.memory.examples)."""
    from control.client import Client, DaemonUnreachable
    from control.protocol import socket_path_for

    client = Client(
        socket_path_for(layout.root),
        COMMANDS["memory.examples"].timeout,
        start_hint=daemon_start_hint(layout.root),
    )
    try:
        return client.call("memory.examples"), _("Example memories stored by the daemon.")
    except DaemonUnreachable:
        pass
    write_new(layout.examples_request_file, b"", PRIVATE_FILE)  # there already: asked before
    return {"requested": True}, _("The daemon stores the example memories when it starts.")
