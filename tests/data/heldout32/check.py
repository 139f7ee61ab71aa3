#!/usr/bin/env python3
"""Sanity check of the heldout32 data (system python, no project imports)."""
import collections, json, os, re, sys

HERE = os.path.dirname(os.path.abspath(__file__))
INTENTS = {"flat", "never_delete", "self_organize", "not_now", "group_by_date",
           "group_by_project", "keep_file", "stop_kind", "none"}
KINDS = {"organize", "duplicates", "temp_cleanup", "failures", "long_hours",
         "pending", "low_mood", "routine"}
errors = []

def err(msg):
    errors.append(msg)

# ---- reasons ----
ids = set()
by_intent = collections.Counter()
by_lang = collections.Counter()
by_both = collections.Counter()
with open(os.path.join(HERE, "reasons.jsonl"), encoding="utf-8") as fh:
    for n, line in enumerate(fh, 1):
        try:
            r = json.loads(line)
        except ValueError as e:
            err("reasons line %d: %s" % (n, e)); continue
        for k in ("id", "lang", "kind", "folder", "text", "intent", "target"):
            if k not in r:
                err("reasons line %d: missing %s" % (n, k))
        if r.get("id") in ids:
            err("duplicate id %s" % r.get("id"))
        ids.add(r.get("id"))
        if not re.fullmatch(r"r-\d{3}", r.get("id", "")):
            err("bad id %r" % r.get("id"))
        if r.get("lang") not in ("es", "en"):
            err("%s: bad lang" % r["id"])
        if r.get("kind") not in KINDS:
            err("%s: bad kind" % r["id"])
        if r.get("intent") not in INTENTS:
            err("%s: bad intent" % r["id"])
        f = r.get("folder")
        if not (isinstance(f, str) and (f == "user" or f.startswith("user/"))):
            err("%s: bad folder %r" % (r["id"], f))
        t = r.get("target")
        if t is not None and not (isinstance(t, str) and t.startswith("user/")):
            err("%s: bad target %r" % (r["id"], t))
        if r.get("intent") in ("stop_kind", "none") and t is not None:
            err("%s: %s must have a null target" % (r["id"], r["intent"]))
        if r.get("intent") in ("flat", "never_delete", "self_organize", "group_by_date",
                               "group_by_project", "keep_file") and t is None:
            err("%s: %s needs a target" % (r["id"], r["intent"]))
        if not r.get("text", "").strip():
            err("%s: empty text" % r["id"])
        by_intent[r.get("intent")] += 1
        by_lang[r.get("lang")] += 1
        by_both[(r.get("intent"), r.get("lang"))] += 1
for i in sorted(INTENTS):
    if by_intent[i] < 40:
        err("intent %s has only %d" % (i, by_intent[i]))
for l in ("es", "en"):
    if by_lang[l] < 150:
        err("lang %s has only %d" % (l, by_lang[l]))
print("reasons: %d lines, %s" % (sum(by_lang.values()), dict(by_lang)))
for i in sorted(INTENTS):
    print("  %-17s %3d  (es %d, en %d)" % (i, by_intent[i], by_both[(i, "es")], by_both[(i, "en")]))

# ---- weeks ----
wdir = os.path.join(HERE, "weeks")
names = sorted(x for x in os.listdir(wdir) if x.endswith(".json"))
if len(names) != 6:
    err("expected 6 weeks, found %d" % len(names))
calm = 0
for name in names:
    try:
        w = json.load(open(os.path.join(wdir, name), encoding="utf-8"))
    except ValueError as e:
        err("%s: %s" % (name, e)); continue
    for k in ("person", "lang", "calm", "days", "findings"):
        if k not in w:
            err("%s: missing %s" % (name, k))
    offs = sorted(d.get("offset") for d in w.get("days", []))
    if offs != list(range(-6, 1)):
        err("%s: offsets %s, want -6..0" % (name, offs))
    nfiles = 0
    for d in w.get("days", []):
        log = d.get("log", "")
        if not log.startswith("# ") or "\n## " not in log:
            err("%s day %s: log not in the chat-log format" % (name, d.get("offset")))
        for h in re.findall(r"^## .*$", log, re.M):
            if not re.fullmatch(r"## \d\d:\d\d:\d\d · (usuario|alma)", h):
                err("%s: bad heading %r" % (name, h))
        for fi in d.get("files", []):
            nfiles += 1
            if not fi.get("path", "").startswith("user/"):
                err("%s: bad file path %r" % (name, fi.get("path")))
            if ("text" in fi) == ("size" in fi):
                err("%s: %s needs exactly one of text/size" % (name, fi.get("path")))
            if not isinstance(fi.get("age_hours"), (int, float)):
                err("%s: %s has no age_hours" % (name, fi.get("path")))
        for sl in d.get("script_logs", []):
            if not sl.get("path", "").startswith("logs/alma/") or "text" not in sl:
                err("%s: bad script log %r" % (name, sl.get("path")))
    fnd = w.get("findings", [])
    if w.get("calm"):
        calm += 1
        if fnd:
            err("%s: calm week with findings" % name)
    else:
        if not 4 <= len(fnd) <= 7:
            err("%s: bad week with %d findings" % (name, len(fnd)))
    for x in fnd:
        if x.get("kind") not in KINDS or not x.get("why"):
            err("%s: bad finding %r" % (name, x))
    print("week %-28s lang %s calm %-5s days %d files %3d findings %s" % (
        name, w.get("lang"), w.get("calm"), len(w.get("days", [])), nfiles,
        ",".join(x.get("kind", "?") for x in fnd) or "-"))
if calm != 3:
    err("expected 3 calm weeks, found %d" % calm)

if errors:
    print("\n".join("ERROR " + e for e in errors))
    sys.exit(1)
print("OK")
