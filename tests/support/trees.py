"""Snapshots of a directory tree, byte for byte, to compare before and after."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path


def snapshot(top: Path, *, skip: tuple[str, ...] = (".alma",)) -> dict[str, str]:
    """Every entry below ``top`` (relative path -> kind and content digest), links not followed."""
    out: dict[str, str] = {}
    top_b = os.fsencode(top)
    for dirpath, dirnames, filenames in os.walk(top_b):
        rel_dir = os.path.relpath(dirpath, top_b)
        if rel_dir != b"." and rel_dir.split(b"/")[0].decode(errors="surrogateescape") in skip:
            dirnames[:] = []
            continue
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            rel = os.path.normpath(os.path.join(rel_dir, name)).decode(errors="surrogateescape")
            if rel.split("/")[0] in skip:
                continue
            st = os.lstat(full)
            if stat.S_ISDIR(st.st_mode):
                out[rel] = "dir"
            elif stat.S_ISLNK(st.st_mode):
                out[rel] = "link:" + os.fsdecode(os.readlink(full))
            else:
                with open(full, "rb") as f:
                    out[rel] = "file:" + hashlib.sha256(f.read()).hexdigest()
    return out


def total_bytes(top: Path) -> dict[str, int]:
    """Content digest -> count, over every regular file below ``top`` (trash included)."""
    counts: dict[str, int] = {}
    for dirpath, _dirnames, filenames in os.walk(os.fsencode(top)):
        for name in filenames:
            full = os.path.join(dirpath, name)
            if os.path.islink(full) or name == b"manifest.json":
                continue
            with open(full, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            counts[digest] = counts.get(digest, 0) + 1
    return counts
