#!/usr/bin/env python3
"""Validate tests/data/heldout32l/reasons.jsonl. System python, no project imports.

Run from the repository root:  python3 tests/data/heldout32l/check.py
"""
import json
import os
import re
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
INTENTS = ["flat", "never_delete", "self_organize", "not_now", "group_by_date",
           "group_by_project", "keep_file", "stop_kind", "none"]
KINDS = {"organize", "duplicates", "temp_cleanup", "failures", "long_hours",
         "pending", "low_mood", "routine"}
FIELDS = ["id", "lang", "kind", "folder", "text", "intent", "target"]
PER_LANG = {"es": 36, "en": 36}
MIN_TRAPS = 150

errors = []


def err(msg):
    errors.append(msg)


rows = []
with open(os.path.join(HERE, "reasons.jsonl"), encoding="utf-8") as f:
    for n, line in enumerate(f, 1):
        line = line.rstrip("\n")
        if not line.strip():
            err("line %d: empty line" % n)
            continue
        try:
            r = json.loads(line)
        except ValueError as e:
            err("line %d: bad JSON: %s" % (n, e))
            continue
        if list(r.keys()) != FIELDS:
            err("line %d: fields %s, expected %s" % (n, list(r.keys()), FIELDS))
            continue
        rows.append(r)

ids = [r["id"] for r in rows]
for i, r in enumerate(rows, 1):
    rid = r["id"]
    if rid != "l-%03d" % i:
        err("%s: id out of sequence (expected l-%03d)" % (rid, i))
    if r["lang"] not in PER_LANG:
        err("%s: lang %r" % (rid, r["lang"]))
    if r["kind"] not in KINDS:
        err("%s: kind %r" % (rid, r["kind"]))
    if r["intent"] not in INTENTS:
        err("%s: intent %r" % (rid, r["intent"]))
    if not isinstance(r["text"], str) or not r["text"].strip():
        err("%s: empty text" % rid)
    folder = r["folder"]
    if not isinstance(folder, str) or not (folder == "user" or folder.startswith("user/")):
        err("%s: folder %r not root-relative under user" % (rid, folder))
    if r["kind"] in ("long_hours", "pending", "low_mood") and folder != "user":
        err("%s: kind %s must have folder 'user'" % (rid, r["kind"]))
    if r["kind"] == "failures" and folder != "user/scripts":
        err("%s: failures must use user/scripts" % rid)
    if r["kind"] == "routine" and folder not in ("user/Entregas", "user/deliveries"):
        err("%s: routine must use the delivery folder" % rid)
    t = r["target"]
    if t is not None and (not isinstance(t, str) or not t.startswith("user/") or t.endswith("/")):
        err("%s: target %r is not a root-relative path" % (rid, t))
    intent = r["intent"]
    if intent in ("stop_kind", "none") and t is not None:
        err("%s: %s target must be null" % (rid, intent))
    if intent == "keep_file":
        # a file path: under user/, not the suggestion's folder, last part is a name
        if t is None or t == folder or not os.path.basename(t):
            err("%s: keep_file target %r is not a file path" % (rid, t))
    if intent in ("flat", "never_delete", "self_organize", "group_by_date",
                  "group_by_project") and t is None:
        err("%s: %s target must not be null" % (rid, intent))

if len(set(ids)) != len(ids):
    err("duplicate ids")

cnt = Counter((r["intent"], r["lang"]) for r in rows)
for intent in INTENTS:
    for lang, want in PER_LANG.items():
        if cnt[(intent, lang)] != want:
            err("count %s/%s = %d, expected %d" % (intent, lang, cnt[(intent, lang)], want))

# trap ids listed in README
readme = open(os.path.join(HERE, "README.md"), encoding="utf-8").read()
m = re.search(r"Trap ids:\s*\n\n(.*?)\n\n", readme, re.S)
traps = m.group(1).split() if m else []
if len(traps) < MIN_TRAPS:
    err("only %d trap ids in README (need >= %d)" % (len(traps), MIN_TRAPS))
for t in traps:
    if t not in ids:
        err("trap id %s not in reasons.jsonl" % t)

if errors:
    for e in errors:
        print("ERROR", e)
    sys.exit(1)
print("ok: %d reasons, %d intents x (es %d, en %d), %d traps"
      % (len(rows), len(INTENTS), PER_LANG["es"], PER_LANG["en"], len(traps)))
