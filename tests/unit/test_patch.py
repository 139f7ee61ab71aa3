"""A model's unified diff is used only when it applies exactly to the offered files."""

from __future__ import annotations

from agent.detectors.patch import DIFF_CHARS, apply_unified_diff

CONF = "user/scripts/backup.conf"
FILES = {CONF: b"# copia\r\nDEST=/mnt/x\r\nMODO=r\xc3\xa1pido\r\n"}
GOOD = """Here is the fix:
```diff
--- a/user/scripts/backup.conf
+++ b/user/scripts/backup.conf
@@ -1,3 +1,3 @@
 # copia
-DEST=/mnt/x
+DEST=/mnt/y
 MODO=rápido
```
"""


def test_a_clean_diff_applies_keeping_the_files_line_endings() -> None:
    assert apply_unified_diff(GOOD, FILES) == {
        CONF: b"# copia\r\nDEST=/mnt/y\r\nMODO=r\xc3\xa1pido\r\n"
    }
    added = GOOD.replace("+DEST=/mnt/y\n", "+DEST=/mnt/y\n+EXTRA=1\n").replace("+1,3", "+1,4")
    assert apply_unified_diff(added, FILES) == {
        CONF: b"# copia\r\nDEST=/mnt/y\r\nEXTRA=1\r\nMODO=r\xc3\xa1pido\r\n"
    }


def test_anything_that_does_not_apply_exactly_is_refused() -> None:
    for bad in (
        GOOD.replace("-DEST=/mnt/x", "-DEST=/mnt/z"),  # context that is not in the file
        GOOD.replace("@@ -1,3 +1,3 @@", "@@ -2,3 +2,3 @@"),  # wrong place: no fuzz
        GOOD.replace("@@ -1,3 +1,3 @@", "@@ -1,4 +1,4 @@"),  # counts that do not add up
        GOOD.replace("user/scripts/backup.conf", "user/scripts/otro.conf"),  # not offered
        GOOD.replace("+++ b/user/scripts/backup.conf", "+++ b/user/x.conf"),  # a rename
        GOOD.replace("--- a/user/scripts/backup.conf", "--- /dev/null"),  # a creation
        GOOD.replace("+DEST=/mnt/y", "+DEST=/mnt/x"),  # changes nothing
        GOOD + "and some words after it\n",
        "no diff at all",
        "",
        GOOD + " " * DIFF_CHARS,
    ):
        assert apply_unified_diff(bad, FILES) is None, bad
    assert apply_unified_diff(GOOD, {CONF: b"DEST=/mnt/x\xff\n"}) is None  # not UTF-8
