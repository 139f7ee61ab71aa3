#!/usr/bin/env python3
"""Check the heldout32f weeks: JSON format and the labels' consistency.

System python only, no project imports. Run from anywhere:
    python3 tests/data/heldout32f/weeks/check.py
Exit status 0 when every week is valid; otherwise prints the problems.
"""
import glob, json, os, re, sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
TODAY = (2026, 11, 28)
DATES = {-6: "2026-11-22", -5: "2026-11-23", -4: "2026-11-24", -3: "2026-11-25",
         -2: "2026-11-26", -1: "2026-11-27", 0: "2026-11-28"}
KINDS = {"organize", "duplicates", "temp_cleanup", "failures", "long_hours",
         "pending", "low_mood", "routine"}
NULL_KINDS = {"long_hours", "pending", "low_mood"}
HEAD = re.compile(r"^## (\d\d):(\d\d):(\d\d) · (usuario|alma)$")
MODEL = re.compile(r"^<!-- model: [^·]+ · tokens: \d+ · ms: \d+ -->$")
TEMP = re.compile(r"(^~\$|^~.*\.tmp$|^\.~lock\..*#$|\.tmp$|~$)")
LONG_SPAN_H = 14.0

errors = []


def err(week, msg):
    errors.append("%s: %s" % (week, msg))


def check_log(w, off, text):
    """Return list of (seconds, who) turns; report format problems."""
    lines = text.split("\n")
    if lines[0] != "# " + DATES[off]:
        err(w, "day %d: log must start with '# %s'" % (off, DATES[off]))
    turns, prev = [], -1
    for i, ln in enumerate(lines):
        if ln.startswith("## "):
            m = HEAD.match(ln)
            if not m:
                err(w, "day %d: bad heading %r" % (off, ln)); continue
            secs = int(m.group(1)) * 3600 + int(m.group(2)) * 60 + int(m.group(3))
            if secs <= prev:
                err(w, "day %d: headings not in time order at %r" % (off, ln))
            prev = secs
            who = m.group(4)
            turns.append((secs, who))
            body = []
            for nxt in lines[i + 1:]:
                if nxt.startswith("## "):
                    break
                body.append(nxt)
            if not any(b.strip() for b in body):
                err(w, "day %d: empty turn at %r" % (off, ln))
            if who == "alma":
                nonblank = [b for b in body if b.strip()]
                if len(nonblank) < 2 or not MODEL.match(nonblank[-1]):
                    err(w, "day %d: alma turn at %r lacks the model comment line" % (off, ln))
        elif ln.startswith("#") and i > 0:
            err(w, "day %d: stray heading %r" % (off, ln))
    if not turns or turns[0][1] != "usuario":
        err(w, "day %d: first turn must be the user's" % off)
    return turns


def check_week(path):
    w = os.path.basename(path)
    try:
        d = json.load(open(path, encoding="utf-8"))
    except Exception as e:  # noqa
        err(w, "not valid JSON: %s" % e); return None
    if set(d) != {"person", "lang", "calm", "days", "findings"}:
        err(w, "top-level keys must be person, lang, calm, days, findings; got %s" % sorted(d))
        return None
    if not isinstance(d["person"], str) or not d["person"].strip():
        err(w, "person must be a non-empty string")
    if d["lang"] not in ("es", "en"):
        err(w, "lang must be es or en")
    if not isinstance(d["calm"], bool):
        err(w, "calm must be a boolean")
    days = d["days"]
    if [x.get("offset") for x in days] != list(range(-6, 1)):
        err(w, "days must be offsets -6..0 in order"); return None

    files, texts, sizes = {}, defaultdict(list), defaultdict(list)
    spans, script_days = {}, defaultdict(lambda: {"ok": set(), "err": set()})
    for day in days:
        off = day["offset"]
        if set(day) != {"offset", "log", "files", "script_logs"}:
            err(w, "day %d: keys must be offset, log, files, script_logs" % off)
            continue
        turns = check_log(w, off, day["log"])
        user = [s for s, who in turns if who == "usuario"]
        if user:
            spans[off] = (max(user) - min(user)) / 3600.0
        for f in day["files"]:
            p = f.get("path", "")
            keys = set(f)
            if keys not in ({"path", "text", "age_hours"}, {"path", "size", "age_hours"}):
                err(w, "day %d: file %r must have path, age_hours and one of text/size" % (off, p))
                continue
            if not p.startswith("user/") or ".." in p.split("/") or p.endswith("/"):
                err(w, "day %d: bad file path %r" % (off, p))
            if p in files:
                err(w, "file %r listed twice" % p)
            a = f["age_hours"]
            if not isinstance(a, (int, float)) or a <= 0:
                err(w, "file %r: age_hours must be > 0" % p)
            elif off > -6 and a > 24:
                err(w, "file %r first appears on day %d but is older than that day" % (p, off))
            if "text" in f:
                if not isinstance(f["text"], str) or not f["text"]:
                    err(w, "file %r: text must be a non-empty string" % p)
                texts[f["text"]].append(p)
            else:
                if not isinstance(f["size"], int) or f["size"] <= 0:
                    err(w, "file %r: size must be a positive int" % p)
                sizes[f["size"]].append(p)
            files[p] = (off, f)
        for s in day["script_logs"]:
            sp = s.get("path", "")
            if set(s) != {"path", "text"} or not re.match(r"^logs/alma/[\w.-]+\.log$", sp):
                err(w, "day %d: bad script_log %r" % (off, sp)); continue
            for ln in s["text"].rstrip("\n").split("\n"):
                if not ln.startswith(DATES[off] + " "):
                    err(w, "day %d: script line not dated that day: %r" % (off, ln))
                m = re.match(r"^\S+ \S+ (INFO|ERROR|WARN) (.*)$", ln)
                if not m:
                    err(w, "day %d: bad script line %r" % (off, ln)); continue
                m2 = re.match(r"^(\S+) (start|done|exited)", m.group(2))
                name = m2.group(1) if m2 else None
                if name:
                    script_days[name]["err" if m.group(1) == "ERROR" else "ok"].add(off)
    for size, ps in sizes.items():
        if len(ps) > 1:
            err(w, "binary files with the same size could be taken as duplicates: %s" % ps)

    dup_groups = [ps for ps in texts.values() if len(ps) > 1]
    failing = {n: v["err"] for n, v in script_days.items() if v["err"]}
    long_days = sorted(o for o, h in spans.items() if h >= LONG_SPAN_H)

    def direct(folder):
        return [p for p in files if p.rsplit("/", 1)[0] == folder]

    fs = d["findings"]
    if not isinstance(fs, list):
        err(w, "findings must be a list"); return d
    kinds = []
    for f in fs:
        if set(f) != {"kind", "target", "why"}:
            err(w, "finding keys must be kind, target, why: %s" % f); continue
        k, t = f["kind"], f["target"]
        kinds.append(k)
        if k not in KINDS:
            err(w, "unknown kind %r" % k)
        if not isinstance(f["why"], str) or len(f["why"]) < 20:
            err(w, "finding %s: why too short" % k)
        if k in NULL_KINDS and t is not None:
            err(w, "%s target must be null" % k)
        if k == "duplicates":
            grp = [g for g in dup_groups if t in g]
            if not grp or grp[0][0] == t and len(grp[0]) < 2:
                err(w, "duplicates target %r has no identical twin" % t)
        if k in ("organize", "temp_cleanup"):
            n = direct(t)
            if k == "organize" and len(n) < 10:
                err(w, "organize target %r has only %d loose files" % (t, len(n)))
            if k == "temp_cleanup":
                old = [p for p in n if TEMP.search(p.rsplit("/", 1)[1])
                       and files[p][1]["age_hours"] + 24 * (-files[p][0]) > 24 * 7]
                if len(old) < 2:
                    err(w, "temp_cleanup target %r has fewer than 2 old temporary files" % t)
        if k == "failures" and len(failing.get(t, ())) < 3:
            err(w, "failures target %r does not fail on 3+ days" % t)
        if k == "long_hours" and len(long_days) < 3:
            err(w, "long_hours labelled but only %d long days" % len(long_days))
        if k == "routine":
            if not (isinstance(t, str) and t.startswith("user/") and not t.endswith("/")):
                err(w, "routine target must be a user/ folder")
    # every identical pair is labelled; no unlabelled symptoms
    for g in dup_groups:
        if not any(f.get("kind") == "duplicates" and f.get("target") in g for f in fs):
            err(w, "identical files not labelled: %s" % g)
    if "long_hours" not in kinds and len(long_days) > 1:
        err(w, "%d long days (>= %.0f h) but no long_hours label" % (len(long_days), LONG_SPAN_H))
    for n, offs in failing.items():
        if len(offs) > 1 and not any(f.get("kind") == "failures" and f.get("target") == n for f in fs):
            err(w, "script %s fails on %d days but is not labelled" % (n, len(offs)))
    if d["calm"]:
        if fs:
            err(w, "calm week must have no findings")
        folders = defaultdict(int)
        for p in files:
            folders[p.rsplit("/", 1)[0]] += 1
        big = {k: v for k, v in folders.items() if v > 6}
        if big:
            err(w, "calm week has crowded folders: %s" % big)
        if any(TEMP.search(p.rsplit("/", 1)[1]) for p in files):
            err(w, "calm week has temporary-looking files")
    else:
        if not 4 <= len(fs) <= 6:
            err(w, "bad week must have 4-6 findings, has %d" % len(fs))
        if len(set(kinds)) != len(kinds):
            err(w, "a kind is labelled twice")
    return d


def main():
    paths = sorted(glob.glob(os.path.join(HERE, "w*.json")))
    weeks = [(os.path.basename(p), check_week(p)) for p in paths]
    weeks = [(n, d) for n, d in weeks if d]
    if len(paths) != 6:
        errors.append("expected 6 week files, found %d" % len(paths))
    calm = [n for n, d in weeks if d["calm"]]
    if len(calm) != 3:
        errors.append("expected 3 calm weeks, found %d" % len(calm))
    allk = [f["kind"] for _, d in weeks for f in d["findings"]]
    missing = KINDS - set(allk)
    if missing:
        errors.append("kinds not covered by the bad weeks: %s" % sorted(missing))
    if allk.count("routine") < 2:
        errors.append("need at least two routines")
    for n, d in weeks:
        print("%-32s %-3s %-5s %s" % (n, d["lang"], "calm" if d["calm"] else "bad",
                                      ", ".join(f["kind"] for f in d["findings"]) or "-"))
    if errors:
        print("\n%d problem(s):" % len(errors))
        for e in errors:
            print("  " + e)
        return 1
    print("\nOK: %d weeks, %d findings" % (len(weeks), len(allk)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
