"""A reason read for its meaning through the real ``alma-agentd`` and ``alma-ctl``: a "keep it
flat" reason in words no rule lists, taken from the blind held-out set, leaves no ``mkdir`` in
the next plan for that folder; forgetting the memory that holds it undoes that."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.daemon import DaemonRoot, find
from tests.support.reasons_eval import unlisted_flat_reason

pytestmark = pytest.mark.e2e


def _mkdirs(d: DaemonRoot, folder: str) -> list[list[Any]]:
    """The mkdir ops of each pending organize suggestion for ``folder``."""
    out = []
    for s in find(d.suggestions(), kind="organize", target=folder, status="pending"):
        shown = d.ok("suggestions", "show", str(s["id"]))
        out.append([op for op in shown["plan"] if op["op"] == "mkdir"])
    return out


@pytest.mark.slow
def test_keep_it_flat_in_unlisted_words_leaves_no_mkdir_in_the_next_plan(
    alma_mem: DaemonRoot,
) -> None:
    row = unlisted_flat_reason()
    folder, reason = row["folder"], row["text"]
    alma = alma_mem
    alma.start()
    alma.wait_for(
        lambda: alma.ok("status")["memory"] == "ready", timeout=300, what="the memory to load"
    )
    alma.messy_folder(folder, 16)
    s = alma.wait_suggestion(kind="organize", target=folder)
    (before,) = _mkdirs(alma, folder)
    assert before, "an organize plan makes subfolders: the check below could not fail"

    alma.ok("suggestions", "reject", str(s["id"]), "--reason", reason)
    alma.write(f"{folder}/nuevo.pdf", b"un archivo nuevo\n")
    done = alma.analyze()
    assert all(mkdirs == [] for mkdirs in _mkdirs(alma, folder)), reason
    (skip,) = find(done["skipped"], kind="organize", target=folder)
    decisions = alma.ok("memory", "list", "--type", "decision")
    (decision,) = [m for m in decisions if reason in m["content"]]
    assert skip["by"] == [decision["id"]]
    (took,) = alma.ok("stats")["reasons"]
    assert took["intent"] == "flat" and took["memory"] == decision["id"]
    assert took["undo"] == f"alma-ctl memory forget {decision['id']}"

    # What ALMA took is undone by forgetting the memory: the next plan makes subfolders again.
    alma.ok("memory", "forget", decision["id"])
    alma.write(f"{folder}/otro.pdf", b"otro archivo nuevo\n")
    alma.analyze()
    (again,) = _mkdirs(alma, folder)
    assert again
    assert alma.ok("stats")["reasons"] == []
    alma.stop()
