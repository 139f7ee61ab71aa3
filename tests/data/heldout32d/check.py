#!/usr/bin/env python3
"""Validate tests/data/heldout32d/reasons.jsonl. System python, no project imports.

Run from the repository root:  python3 tests/data/heldout32d/check.py
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
PER_LANG = {"es": 24, "en": 24}
MIN_TRAPS = 40
TRAPS = [
    "d-001", "d-003", "d-004", "d-006", "d-008", "d-009", "d-014", "d-017",
    "d-020", "d-022", "d-026", "d-035", "d-037", "d-042", "d-044", "d-048",
    "d-052", "d-055", "d-067", "d-078", "d-082", "d-084", "d-086", "d-090",
    "d-093", "d-095", "d-096", "d-104", "d-106", "d-108", "d-109", "d-111",
    "d-118", "d-119", "d-120", "d-126", "d-131", "d-132", "d-133", "d-134",
    "d-136", "d-138", "d-139", "d-140", "d-143", "d-148", "d-152", "d-154",
    "d-155", "d-159", "d-161", "d-162", "d-164", "d-167", "d-174", "d-177",
    "d-178", "d-179", "d-181", "d-182", "d-203", "d-211", "d-212", "d-217",
    "d-229", "d-230", "d-234", "d-239", "d-241", "d-244", "d-245", "d-247",
    "d-249", "d-252", "d-253", "d-254", "d-259", "d-263", "d-265", "d-270",
    "d-272", "d-273", "d-281", "d-283", "d-285", "d-289", "d-291", "d-292",
    "d-293", "d-295", "d-299", "d-300", "d-303", "d-305", "d-307", "d-309",
    "d-312", "d-319", "d-324", "d-333", "d-337", "d-346", "d-348", "d-350",
    "d-353", "d-354", "d-359", "d-360", "d-363", "d-365", "d-367", "d-369",
    "d-373", "d-374", "d-375", "d-377", "d-381", "d-383", "d-393", "d-395",
    "d-399", "d-403", "d-404", "d-412", "d-415", "d-416", "d-420", "d-422",
    "d-425", "d-426", "d-427", "d-428", "d-432",
]
TOTAL = 432

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
    if rid != "d-%03d" % i:
        err("%s: id out of sequence (expected d-%03d)" % (rid, i))
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
    if r["kind"] in ("long_hours", "pending", "low_mood", "failures") and \
            intent not in ("not_now", "stop_kind", "none"):
        err("%s: notice kind %s cannot carry %s" % (rid, r["kind"], intent))
    if intent in ("flat", "group_by_date", "group_by_project") and r["kind"] != "organize":
        err("%s: %s goes with organize, not %s" % (rid, intent, r["kind"]))
    if intent in ("flat", "never_delete", "self_organize", "group_by_date",
                  "group_by_project") and t is None:
        err("%s: %s target must not be null" % (rid, intent))

if len(rows) != TOTAL:
    err("%d reasons, expected %d" % (len(rows), TOTAL))
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
if traps != TRAPS:
    err("trap ids in README differ from the list in check.py")
for t in traps:
    if t not in ids:
        err("trap id %s not in reasons.jsonl" % t)

if errors:
    for e in errors:
        print("ERROR", e)
    sys.exit(1)
print("ok: %d reasons, %d intents x (es %d, en %d), %d traps"
      % (len(rows), len(INTENTS), PER_LANG["es"], PER_LANG["en"], len(traps)))
